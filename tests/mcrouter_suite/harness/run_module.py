# Runs one of mcrouter's test modules (argv[1], "mcrouter.test.test_x") with
# unittest and prints one JSON line per test: {"id", "outcome", "detail"}.
# A test that needs thrift is a skip, not a failure: ithaca speaks no thrift.
import json
import sys
import traceback
import unittest

import mcrouter.test.MCProcess as mcprocess
import mcrouter.test.McrouterTestCase as testcase


def _needs_thrift(*_args, **_kwargs):
    raise unittest.SkipTest("needs thrift (out of ithaca's scope)")


_add_mcrouter = testcase.McrouterTestCase.add_mcrouter


def _add_mcrouter_no_thrift(self, *args, **kwargs):
    if kwargs.get("enable_thrift"):
        _needs_thrift()
    return _add_mcrouter(self, *args, **kwargs)


testcase.McrouterTestCase.add_mcrouter = _add_mcrouter_no_thrift
mcprocess.MCProcess.get_thrift_client = _needs_thrift
for name in ("MockMemcachedThrift", "MockMemcachedDual"):
    if hasattr(mcprocess, name):
        getattr(mcprocess, name).__init__ = _needs_thrift


class JsonResult(unittest.TestResult):
    def _emit(self, test, outcome, detail=""):
        print(json.dumps({"id": test.id(), "outcome": outcome, "detail": detail[-1500:]}), flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._emit(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._emit(test, "failed", "".join(traceback.format_exception(*err)))

    def addError(self, test, err):
        super().addError(test, err)
        self._emit(test, "error", "".join(traceback.format_exception(*err)))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._emit(test, "skipped", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._emit(test, "passed", "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._emit(test, "failed", "unexpected success")


def main():
    module = sys.argv[1]
    names = sys.argv[2:]
    loader = unittest.TestLoader()
    try:
        suite = loader.loadTestsFromNames(names) if names else loader.loadTestsFromName(module)
    except unittest.SkipTest as e:
        print(json.dumps({"id": module, "outcome": "skipped", "detail": str(e)}), flush=True)
        return
    suite.run(JsonResult())


if __name__ == "__main__":
    main()
