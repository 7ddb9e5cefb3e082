"""mcrouter's own test configs (mcrouter_corpus/, copied as they are from
facebook/mcrouter: mcrouter/test/*.json and mcrouter/test/cpp_unit_tests/files/,
MIT licence in mcrouter_corpus/LICENSE) read by `ithaca --check-config`.

Only mcrouter's test placeholders are given (CONFIG_PARAMS and
TEXT_PLACEHOLDERS below, as its tests give them); everything else is read as
mcrouter would read it. Used by test_mcrouter_corpus.py and by
`scripts/mcrouter-corpus`, which prints the table."""
import pathlib
import re
import subprocess
import tempfile

CORPUS = pathlib.Path(__file__).resolve().parent / "mcrouter_corpus"

# What mcrouter's tests give these files: --config-params (the names its
# Python tests pass, e.g. test_config_params.py's PORT and POOL; the
# preprocessor substitutes %NAME%), and text they replace before starting
# mcrouter (MigrateRoute's START_TIME, the C++ tests' "localhost:PORT").
CONFIG_PARAMS = "PORT:11211,PORT_1:11212,PORT_2:11213,PORT_SHADOW:11214,POOL:A"
TEXT_PLACEHOLDERS = [("START_TIME", "1700000000"), ("localhost:PORT", "localhost:11211")]

# Files in the folder that are not route configs: a runtime-vars file, a
# pool-stats config, a config fragment another config imports.
NOT_CONFIGS = {"runtime_vars_file.json", "test_poolstats_config.json", "test_shadow_with_file_config.json"}
# Configs mcrouter's own tests use to check that a bad config is refused.
INVALID_ON_PURPOSE = {"invalid_config.json", "test_dump_config_invalid.json", "libmcrouter_invalid_pools.json"}


def needs_caret_or_thrift(text):
    """A config whose servers speak carbon's caret or thrift (out of scope)."""
    return re.search(r"caret|thrift", text, re.IGNORECASE) is not None


def fill(text):
    for placeholder, value in TEXT_PLACEHOLDERS:
        text = text.replace(placeholder, value)
    return text


def configs():
    """(name, text) of every route config in the corpus, sorted by name."""
    for path in sorted(CORPUS.glob("*.json")):
        if path.name not in NOT_CONFIGS:
            yield path.name, path.read_text()


def check(binary, name, text, timeout=20):
    """(accepted, first line of the answer) for one config, written beside
    copies of the corpus so its imports resolve as they do in mcrouter's tree."""
    with tempfile.TemporaryDirectory() as d:
        for path in CORPUS.glob("*.json"):
            (pathlib.Path(d) / path.name).write_text(fill(path.read_text()))
        conf = pathlib.Path(d) / name
        conf.write_text(fill(text))
        proc = subprocess.run([binary, "--check-config", "--config-params", CONFIG_PARAMS, "--config", str(conf)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        out = (proc.stdout + proc.stderr).strip().replace(str(conf), name).replace(d + "/", "")
        return proc.returncode == 0, out.splitlines()[0] if out else ""
