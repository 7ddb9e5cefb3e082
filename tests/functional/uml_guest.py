"""A User-mode Linux guest for the tests that need a kernel feature this
machine's kernel may lack (kernel TLS: the `tls` module). Debian's
user-mode-linux package is a Linux kernel that runs as an ordinary process,
with its modules in /usr/lib/uml/modules; scripts/install-deps.sh installs it
and kmod (insmod).

The guest's root file system is this machine's own, read through hostfs, so
the binaries under test, Python and the test's temporary directory are at the
same paths inside. Its network is its own: only a loopback, which init brings
up, so a guest server can take any port. The guest runs one command as
init's child and powers off; what the command printed and its exit status
come back through files in the test's directory.

Nothing in the guest touches this machine's network, and the guest writes
only where its command writes (the test's directory).
"""

import os
import shutil
import signal
import subprocess

UML = "/usr/bin/linux.uml"
MODULES = "/usr/lib/uml/modules"
# insmod order: gcm(aes), which kernel TLS needs for AES-GCM records, is a
# module in Debian's UML kernel, and the guest has no modprobe tree to load
# it on demand.
TLS_MODULES = ("crypto/gf128mul.ko", "crypto/ghash-generic.ko", "crypto/ctr.ko", "crypto/gcm.ko",
               "net/tls/tls.ko")


def available():
    """None when a guest can boot here, else why not (for the failure message)."""
    if not os.access(UML, os.X_OK):
        return f"{UML} is missing: install Debian's user-mode-linux (scripts/install-deps.sh)"
    if not shutil.which("insmod"):
        return "insmod is missing: install Debian's kmod (scripts/install-deps.sh)"
    if not os.path.isdir(MODULES) or not os.listdir(MODULES):
        return f"{MODULES} has no kernel modules"
    return None


def run(workdir, argv, modules=TLS_MODULES, timeout=180, mem="768M"):
    """Boots a guest in `workdir` (the test's own temporary directory), runs
    `argv` in it and returns (exit status, the command's output). The status
    is None when the command never finished (the guest was killed at
    `timeout` seconds, or it panicked); the kernel's console log is in
    workdir/console.txt."""
    version = sorted(os.listdir(MODULES))[-1]
    out, rc = os.path.join(workdir, "guest-out.txt"), os.path.join(workdir, "guest-rc.txt")
    init = os.path.join(workdir, "guest-init.sh")
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in argv)
    loads = "\n".join(f"insmod {MODULES}/{version}/kernel/{m} || echo 'insmod {m} failed'" for m in modules)
    with open(init, "w") as f:
        f.write(f"""#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME={workdir}
mount -t proc proc /proc
mount -t sysfs sys /sys
ip link set lo up
{{
{loads}
{quoted}
}} > {out} 2>&1
echo $? > {rc}
echo o > /proc/sysrq-trigger
""")
    os.chmod(init, 0o755)
    # uml_dir: UML's own runtime files (its umid directory) stay in workdir,
    # not in $HOME/.uml. con=null: the guest's other consoles stay silent.
    cmd = [UML, f"mem={mem}", "rootfstype=hostfs", "rw", f"init={init}", f"uml_dir={workdir}",
           "umid=ithaca-test", "con0=null,fd:1", "con=null"]
    # TMPDIR: UML backs the guest's memory with a file there (by default in
    # /dev/shm, which a container may keep small).
    with open(os.path.join(workdir, "console.txt"), "w") as console:
        proc = subprocess.Popen(cmd, stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "TMPDIR": workdir}, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # UML's helper processes share its session: end them all.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    status = None
    if os.path.exists(rc):
        with open(rc) as f:
            status = int(f.read().strip() or "-1")
    text = open(out).read() if os.path.exists(out) else ""
    return status, text
