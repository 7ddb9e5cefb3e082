#!/usr/bin/env python3
"""`meson install` into a DESTDIR: the layout (exactly these files: the
binary, the configs, the man pages, the examples, the unit), the
installed binary runs and accepts the installed config, and the systemd unit
has the keys a service needs; `systemd-analyze verify` checks it where that
tool exists (a copy whose ExecStart points into the DESTDIR, since the real
path exists only once installed).

usage: check_install.py MESON BUILD_ROOT SOURCE_ROOT SERVICE_TYPE"""

import configparser
import json
import os
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def options(meson, build):
    out = subprocess.run([meson, "introspect", build, "--buildoptions"], check=True, capture_output=True, text=True)
    return {o["name"]: o["value"] for o in json.loads(out.stdout)}


def under(prefix, path):
    return path if os.path.isabs(path) else os.path.join(prefix, path)


def read_unit(path):
    # systemd allows repeated keys; the unit has none, so a strict parser
    # also proves that.
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    with open(path) as f:
        parser.read_file(f)
    return parser


def main():
    meson, build, source, service_type = sys.argv[1:5]
    opts = options(meson, build)
    prefix = opts["prefix"]
    bindir = under(prefix, opts["bindir"])
    etc = os.path.join(under(prefix, opts["sysconfdir"]), "ithaca")
    mandir = under(prefix, opts["mandir"])
    examples = os.path.join(under(prefix, opts["datadir"]), "doc", "ithaca", "examples")
    unit_dir = opts["systemd_unit_dir"] or os.path.join(prefix, "lib", "systemd", "system")
    memcached_link = os.path.join(under(prefix, opts["libexecdir"]), "ithaca", "memcached")
    with tempfile.TemporaryDirectory() as dest:
        subprocess.run([meson, "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        d = lambda p: dest + p  # noqa: E731

        expected = {bindir + "/ithaca", etc + "/ithaca.yaml", etc + "/router.yaml", etc + "/replica.yaml",
                    unit_dir + "/ithaca.service", memcached_link, mandir + "/man1/ithaca.1", mandir + "/man5/ithaca.yaml.5",
                    *(f"{examples}/{name}" for name in ("ithaca.yaml", "router.yaml", "replica.yaml", "routes.yaml"))}
        installed = set()
        for root, _dirs, files in os.walk(dest):
            for name in files:
                installed.add(os.path.join(root, name)[len(dest):])
        if installed != expected:
            fail(f"installed {sorted(installed)}, expected {sorted(expected)}")
        if not os.access(d(bindir + "/ithaca"), os.X_OK):
            fail("the binary is not executable")
        # The memcached entry point: a link that resolves to the installed binary.
        link = d(memcached_link)
        if not os.path.islink(link):
            fail(f"{memcached_link} is not a symbolic link")
        target = os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(link)))
        if not target.endswith(bindir + "/ithaca") and os.readlink(link) != bindir + "/ithaca":
            fail(f"{memcached_link} points at {os.readlink(link)!r}, not {bindir}/ithaca")
        for name in ("ithaca.yaml", "router.yaml", "replica.yaml"):
            with open(os.path.join(source, "config", name), "rb") as a, open(d(etc + "/" + name), "rb") as b:
                if a.read() != b.read():
                    fail(f"{etc}/{name} differs from config/{name}")
        for name in ("ithaca.yaml", "router.yaml", "replica.yaml", "routes.yaml"):
            with open(os.path.join(source, "config", name), "rb") as a, open(d(examples + "/" + name), "rb") as b:
                if a.read() != b.read():
                    fail(f"{examples}/{name} differs from config/{name}")
        for page in ("man1/ithaca.1", "man5/ithaca.yaml.5"):
            with open(os.path.join(source, "doc", os.path.basename(page)), "rb") as a, \
                 open(d(mandir + "/" + page), "rb") as b:
                if a.read() != b.read():
                    fail(f"{mandir}/{page} differs from doc/{os.path.basename(page)}")

        # The installed binary runs and takes the installed config.
        version = subprocess.run([d(bindir + "/ithaca"), "--version"], capture_output=True, text=True, timeout=10)
        if version.returncode != 0 or not version.stdout.startswith("ithaca "):
            fail(f"--version: {version.returncode} {version.stdout!r} {version.stderr!r}")
        check = subprocess.run([d(bindir + "/ithaca"), "--check-config", "--config", d(etc + "/ithaca.yaml")],
                               capture_output=True, text=True, timeout=10)
        if check.returncode != 0:
            fail(f"--check-config on the installed ithaca.yaml: {check.stdout}{check.stderr}")

        # The unit's keys.
        unit_path = d(unit_dir + "/ithaca.service")
        unit = read_unit(unit_path)
        service = unit["Service"]
        want = {
            "Type": service_type,
            "ExecStart": f"{bindir}/ithaca --config {etc}/ithaca.yaml",
            "ExecReload": "/bin/kill -HUP $MAINPID",
            "NotifyAccess": "all",  # a takeover's new process says MAINPID= and READY=1
            "DynamicUser": "yes",
            "RuntimeDirectory": "ithaca",
            "StateDirectory": "ithaca",  # the reliable deletes' spool: /var/lib/ithaca/spool
            "NoNewPrivileges": "yes",
            "ProtectSystem": "strict",
            "ProtectHome": "yes",
            "PrivateTmp": "yes",
            "CapabilityBoundingSet": "",
            "Restart": "on-failure",
        }
        for key, value in want.items():
            if service.get(key) != value:
                fail(f"[Service] {key}={service.get(key)!r}, expected {value!r}")
        if int(service.get("LimitNOFILE", "0")) < 65536:
            fail(f"LimitNOFILE={service.get('LimitNOFILE')!r}, expected at least 65536")
        if "io_uring_setup" not in service.get("SystemCallFilter", "") or service.get("SystemCallErrorNumber") != "EPERM":
            fail("SystemCallFilter must allow io_uring and refuse with EPERM (else the kernel kills ithaca)")
        if unit["Install"].get("WantedBy") != "multi-user.target":
            fail("[Install] WantedBy=multi-user.target missing")
        if "@" in open(unit_path).read().replace("@system-service", ""):
            fail("an @placeholder@ was not substituted")

        analyze = shutil.which("systemd-analyze")
        if analyze:
            # The same unit, ExecStart pointing at the binary in the DESTDIR.
            copy_dir = os.path.join(dest, "verify")
            os.mkdir(copy_dir)
            copy = os.path.join(copy_dir, "ithaca.service")
            with open(unit_path) as f:
                text = f.read().replace(f"ExecStart={bindir}/ithaca", f"ExecStart={d(bindir)}/ithaca")
            with open(copy, "w") as f:
                f.write(text)
            r = subprocess.run([analyze, "verify", "--man=no", copy], capture_output=True, text=True, timeout=60)
            if r.returncode != 0 or r.stderr.strip() or r.stdout.strip():
                fail(f"systemd-analyze verify: exit {r.returncode}\n{r.stdout}{r.stderr}")
            print("systemd-analyze verify: clean")
        else:
            print("systemd-analyze is not installed: the unit was checked by its keys only")
    print("install layout OK")


if __name__ == "__main__":
    main()
