#pragma once
// Reply lines of the text protocols, exactly as memcached 1.6.18 sends them
// (without the "\r\n"), captured from a live server.

#include <string_view>

namespace ithaca::protocol {

inline constexpr std::string_view kReplyError = "ERROR";
inline constexpr std::string_view kReplyBadFormat = "CLIENT_ERROR bad command line format";
// mcrouter's words (parser_settings::mcrouter_replies).
inline constexpr std::string_view kReplyBadKey = "CLIENT_ERROR bad key";
inline constexpr std::string_view kReplyMalformed = "CLIENT_ERROR malformed request";
// mcrouter's answer to `stats GROUP` with a group it does not know.
inline constexpr std::string_view kReplyBadStatsCommand = "CLIENT_ERROR bad stats command";
inline constexpr std::string_view kReplyTooLarge = "SERVER_ERROR object too large for cache";
inline constexpr std::string_view kReplyBadDataChunk = "CLIENT_ERROR bad data chunk";
inline constexpr std::string_view kReplyBadDelta = "CLIENT_ERROR invalid numeric delta argument";
inline constexpr std::string_view kReplyBadExptime = "CLIENT_ERROR invalid exptime argument";
inline constexpr std::string_view kReplyNonNumeric = "CLIENT_ERROR cannot increment or decrement non-numeric value";
inline constexpr std::string_view kReplyOutOfMemory = "SERVER_ERROR out of memory";
inline constexpr std::string_view kReplyOutOfMemoryStoring = "SERVER_ERROR out of memory storing object";
inline constexpr std::string_view kReplyReadFailed = "SERVER_ERROR error reading value";
inline constexpr std::string_view kReplyShutdownDisabled = "SERVER_ERROR: shutdown not enabled";
inline constexpr std::string_view kReplyMemlimitTooSmall = "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m";
inline constexpr std::string_view kReplyMemlimitNotBytes = "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes";
inline constexpr std::string_view kReplyMemlimitFailed = "MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust";
// operator commands for features ithaca does not have (exec_admin.cc)
inline constexpr std::string_view kReplyWatchNotAllowed = "CLIENT_ERROR watch commands not allowed";
// slabs (slabs_command.cc), memcached 1.6.45's words
inline constexpr std::string_view kReplySlabsSame = "SAME src and dst class are identical";
inline constexpr std::string_view kReplySlabsBadClass = "BADCLASS invalid src or dst class id";
inline constexpr std::string_view kReplySlabsWindow = "CLIENT_ERROR automove window too low or too high";
inline constexpr std::string_view kReplyWatchPipelined = "ERROR cannot pipeline other commands before watch";
inline constexpr std::string_view kReplyWatcherTooMany = "WATCHER_TOO_MANY log watcher limit reached";
inline constexpr std::string_view kReplyLruCrawlerDisabled = "CLIENT_ERROR lru crawler disabled";
inline constexpr std::string_view kReplyLruCrawlerNoStart = "ERROR failed to start lru crawler thread";
inline constexpr std::string_view kReplyCrawlerBadClass = "BADCLASS invalid class id";
inline constexpr std::string_view kReplyCrawlerUnknown = "ERROR an unknown error happened";
inline constexpr std::string_view kReplyMetadumpNotAllowed = "ERROR metadump not allowed";
inline constexpr std::string_view kReplyMgdumpNotAllowed = "ERROR key dump not allowed";
inline constexpr std::string_view kReplyMetadumpPipelined = "ERROR cannot pipeline other commands before metadump";
inline constexpr std::string_view kReplyMgdumpPipelined = "ERROR cannot pipeline other commands before mgdump";
inline constexpr std::string_view kReplyLruCrawlerSleep = "CLIENT_ERROR sleep must be one second or less";
inline constexpr std::string_view kReplyLruPcts = "ERROR hot and warm pcts must not exceed 80";
inline constexpr std::string_view kReplyLruFactors = "ERROR hot/warm age factors must be greater than 0";
inline constexpr std::string_view kReplyStatsDetailUsage = "CLIENT_ERROR usage: stats detail on|off|dump";
// memcached 1.6.45's refusals under -F and -X, and its stats cachedump errors
inline constexpr std::string_view kReplyFlushNotAllowed = "CLIENT_ERROR flush_all not allowed";
inline constexpr std::string_view kReplyDetailNotAllowed = "CLIENT_ERROR stats detail not allowed";
inline constexpr std::string_view kReplyCachedumpNotAllowed = "CLIENT_ERROR stats cachedump not allowed";
inline constexpr std::string_view kReplyBadCommandLine = "CLIENT_ERROR bad command line";
inline constexpr std::string_view kReplyIllegalSlabId = "CLIENT_ERROR Illegal slab id";
// meta
inline constexpr std::string_view kReplyInvalidFlag = "CLIENT_ERROR invalid flag";
inline constexpr std::string_view kReplyDuplicateFlag = "CLIENT_ERROR duplicate flag";
inline constexpr std::string_view kReplyInvalidOrDuplicateFlag = "CLIENT_ERROR invalid or duplicate flag";
inline constexpr std::string_view kReplyBadToken = "CLIENT_ERROR bad token in command line format";
inline constexpr std::string_view kReplyBadKeyEncoding = "CLIENT_ERROR error decoding key";
inline constexpr std::string_view kReplyOpaqueTooLong = "CLIENT_ERROR opaque token too long";
// mg says "are too long"; ms, md and ma say "too long" (memcached 1.6.18).
inline constexpr std::string_view kReplyFlagsTooLong = "CLIENT_ERROR options flags are too long";
inline constexpr std::string_view kReplyMsMode = "CLIENT_ERROR invalid mode for ms M token";
inline constexpr std::string_view kReplyMaMode = "CLIENT_ERROR invalid mode for ma M token";
inline constexpr std::string_view kReplyBadInitial = "CLIENT_ERROR invalid numeric initial value";
inline constexpr std::string_view kReplyBadDeltaValue = "CLIENT_ERROR invalid numeric delta value";

}  // namespace ithaca::protocol
