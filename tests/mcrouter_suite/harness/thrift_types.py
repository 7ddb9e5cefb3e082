# A stand-in for carbon's generated thrift types, which mcrouter's test
# harness imports at the top of MCProcess.py; only the thrift paths use it,
# and those are skipped (config.py).
import enum


class Result(enum.IntEnum):
    UNKNOWN = 0
    OK = 1
    NOTFOUND = 2
    FOUND = 3
    STORED = 4
    NOTSTORED = 5
    DELETED = 6
    TOUCHED = 7
    EXISTS = 8
