# mcrouter's test harness reads its binaries' paths from mcrouter.test.config
# (mcrouter_config.py in mcrouter's tree). This one is ithaca's: `mcrouter` is
# ithaca started as `ithaca --mcrouter`, and mcrouter's mock memcached is a
# real memcached (stand-ins written by scripts/mcrouter-tests into the run's
# tree, whose paths it substitutes below). Thrift and the tools ithaca has no
# counterpart of (mcpiper, the thrift mock servers) skip the test that asks.
import unittest

STANDINS = {}  # name -> path; filled in by scripts/mcrouter-tests


class McrouterGlobals:
    @staticmethod
    def binPath(name):
        if name not in STANDINS:
            raise unittest.SkipTest(f"needs mcrouter's {name}, which ithaca has no stand-in for")
        return STANDINS[name]

    @staticmethod
    def preprocessArgs(args):
        return args

    @staticmethod
    def useThriftClient():
        return False

    @staticmethod
    def createThriftTestClient(addr, port):
        raise unittest.SkipTest("needs a thrift client (thrift is out of ithaca's scope)")
