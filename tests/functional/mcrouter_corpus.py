"""mcrouter's own test configs (mcrouter_corpus/, copied as they are from
facebook/mcrouter: mcrouter/test/*.json and mcrouter/test/cpp_unit_tests/files/,
MIT licence in mcrouter_corpus/LICENSE) read by `ithaca --check-config`.

Only mcrouter's test placeholders are filled (%PORT%-style: its Python tests
replace them with a mock server's port before starting mcrouter); everything
else is read as mcrouter would read it. Used by test_mcrouter_corpus.py and by
`scripts/mcrouter-corpus`, which prints the table."""
import pathlib
import re
import subprocess
import tempfile

CORPUS = pathlib.Path(__file__).resolve().parent / "mcrouter_corpus"

# Placeholders mcrouter's tests fill (mcrouter/test/McrouterTestCase.py and
# the tests that use these files) with ports of servers they start.
PLACEHOLDERS = re.compile(r"%(PORT(?:_[A-Z0-9]+)?|POOL)%")

# Files in the folder that are not route configs: a runtime-vars file, a
# pool-stats config, a config fragment another config imports.
NOT_CONFIGS = {"runtime_vars_file.json", "test_poolstats_config.json", "test_shadow_with_file_config.json"}
# Configs mcrouter's own tests use to check that a bad config is refused.
INVALID_ON_PURPOSE = {"invalid_config.json", "test_dump_config_invalid.json"}


def needs_caret_or_thrift(text):
    """A config whose servers speak carbon's caret or thrift (out of scope)."""
    return re.search(r"caret|thrift", text, re.IGNORECASE) is not None


def fill(text, port=11211):
    return PLACEHOLDERS.sub(str(port), text)


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
        proc = subprocess.run([binary, "--check-config", "--config", str(conf)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        out = (proc.stdout + proc.stderr).strip().replace(str(conf), name).replace(d + "/", "")
        return proc.returncode == 0, out.splitlines()[0] if out else ""
