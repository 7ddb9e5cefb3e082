<?php
// The client-library workload (see test_client_libraries.py) for PHP's
// memcached extension (libmemcached; text or binary protocol).
//
//     php php_driver.php text|binary PREFIX HOST:PORT...
//
// Runs each step against every HOST:PORT in turn (so the TTL sleep is shared)
// and prints one JSON line per step and target: {"t": i, "op": name, "r": result}.
// A result is [the method's return value, getResultCode()]: the code tells
// NOTFOUND from NOTSTORED from DATA_EXISTS, which a bare `false` does not.

const TTL = 2;
const TTL_SLEEP_US = 3200000;

function make_value(int $n): string {
    $parts = [];
    $size = 0;
    for ($i = 0; $size < $n; $i++) {
        $s = "$i.";
        $parts[] = $s;
        $size += strlen($s);
    }
    return substr(implode("", $parts), 0, $n);
}

function show($v) {
    if ($v === null || $v === false || !is_string($v)) return $v;
    if (strlen($v) > 64) return "<" . strlen($v) . " bytes md5 " . md5($v) . ">";
    return $v;
}

function client(string $addr, bool $binary, bool $noreply = false): Memcached {
    $m = new Memcached();
    $m->setOption(Memcached::OPT_BINARY_PROTOCOL, $binary);
    $m->setOption(Memcached::OPT_NOREPLY, $noreply);
    // Off so that the large values cross the wire at full size.
    $m->setOption(Memcached::OPT_COMPRESSION, false);
    $m->setOption(Memcached::OPT_CONNECT_TIMEOUT, 5000);
    $m->setOption(Memcached::OPT_POLL_TIMEOUT, 10000);
    $m->setOption(Memcached::OPT_RECV_TIMEOUT, 10000000);
    $m->setOption(Memcached::OPT_SEND_TIMEOUT, 10000000);
    [$host, $port] = explode(":", $addr);
    $m->addServer($host, (int)$port);
    return $m;
}

$mode = $argv[1];
$P = $argv[2];
$addrs = array_slice($argv, 3);
$binary = $mode === "binary";

// Every byte value, then reply lines a careless proxy might parse as its own.
$nasty = implode("", array_map("chr", range(0, 255))) . "\r\nEND\r\nVALUE x 0 1\r\nx\r\nEND\r\n";
$big100 = make_value(100000);
$big900 = make_value(900000);
$maxkey = $P . "maxkey" . str_repeat("k", 250 - strlen($P) - strlen("maxkey"));
$multi = [];
for ($i = 0; $i < 50; $i++) $multi[] = "{$P}m$i";

$multi_result = function ($found) use ($P) {
    if (!is_array($found)) return $found;
    $out = [];
    foreach ($found as $k => $v) $out[substr($k, strlen($P))] = show($v);
    ksort($out);
    return (object)$out;
};

$steps = [
    ["set_small", fn($c, &$s) => $c->set("{$P}small", "hello world")],
    ["get_small", fn($c, &$s) => show($c->get("{$P}small"))],
    ["get_missing", fn($c, &$s) => show($c->get("{$P}missing"))],
    ["set_100k", fn($c, &$s) => $c->set("{$P}v100k", $big100)],
    ["get_100k", fn($c, &$s) => show($c->get("{$P}v100k"))],
    ["set_900k", fn($c, &$s) => $c->set("{$P}v900k", $big900)],
    ["get_900k", fn($c, &$s) => show($c->get("{$P}v900k"))],
    ["set_empty", fn($c, &$s) => $c->set("{$P}empty", "")],
    ["get_empty", fn($c, &$s) => show($c->get("{$P}empty"))],
    ["set_binary", fn($c, &$s) => $c->set("{$P}binary", $nasty)],
    ["get_binary", fn($c, &$s) => show($c->get("{$P}binary"))],
    ["get_multi_big", fn($c, &$s) => $multi_result($c->getMulti(["{$P}small", "{$P}v100k", "{$P}v900k", "{$P}missing"]))],
    ["set_multi_keys", function ($c, &$s) use ($multi) {
        $out = [];
        foreach ($multi as $i => $k) if ($i % 5 != 0) $out[] = $c->set($k, "mv$i");
        return $out;
    }],
    ["get_multi_50", fn($c, &$s) => $multi_result($c->getMulti($multi))],
    ["set_multi", fn($c, &$s) => $c->setMulti(["{$P}sm1" => "one", "{$P}sm2" => "two"])],
    ["get_set_multi", fn($c, &$s) => $multi_result($c->getMulti(["{$P}sm1", "{$P}sm2"]))],
    ["add_existing", fn($c, &$s) => $c->add("{$P}small", "other")],
    ["add_new", fn($c, &$s) => $c->add("{$P}add_new", "fresh")],
    ["get_add_new", fn($c, &$s) => show($c->get("{$P}add_new"))],
    ["replace_existing", fn($c, &$s) => $c->replace("{$P}small", "replaced")],
    ["replace_missing", fn($c, &$s) => $c->replace("{$P}replace_missing", "x")],
    ["get_replaced", fn($c, &$s) => show($c->get("{$P}small"))],
    ["set_append", fn($c, &$s) => $c->set("{$P}append", "mid")],
    ["append", fn($c, &$s) => $c->append("{$P}append", "_end")],
    ["prepend", fn($c, &$s) => $c->prepend("{$P}append", "start_")],
    ["get_append", fn($c, &$s) => show($c->get("{$P}append"))],
    ["append_missing", fn($c, &$s) => $c->append("{$P}append_missing", "x")],
    ["prepend_missing", fn($c, &$s) => $c->prepend("{$P}append_missing", "x")],
    ["set_counter", fn($c, &$s) => $c->set("{$P}counter", "10")],
    ["incr", fn($c, &$s) => $c->increment("{$P}counter", 5)],
    ["decr", fn($c, &$s) => $c->decrement("{$P}counter", 3)],
    ["decr_below_zero", fn($c, &$s) => $c->decrement("{$P}counter", 100)],
    ["get_counter", fn($c, &$s) => show($c->get("{$P}counter"))],
    ["incr_missing", fn($c, &$s) => $c->increment("{$P}counter_missing", 1)],
    ["decr_missing", fn($c, &$s) => $c->decrement("{$P}counter_missing", 1)],
    // Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
    ["set_counter_large", fn($c, &$s) => $c->set("{$P}counter", "9223372036854775806")],
    ["incr_large", fn($c, &$s) => $c->increment("{$P}counter", 1)],
    ["delete_existing", fn($c, &$s) => $c->delete("{$P}small")],
    ["get_deleted", fn($c, &$s) => show($c->get("{$P}small"))],
    ["delete_missing", fn($c, &$s) => $c->delete("{$P}small")],
    ["set_touch", fn($c, &$s) => $c->set("{$P}touch", "t")],
    ["touch", fn($c, &$s) => $c->touch("{$P}touch", TTL)],
    ["touch_missing", fn($c, &$s) => $c->touch("{$P}touch_missing", TTL)],
    ["get_touched", fn($c, &$s) => show($c->get("{$P}touch"))],
    ["set_cas", fn($c, &$s) => $c->set("{$P}cas", "c0")],
    ["gets", function ($c, &$s) use ($P) {
        $r = $c->get("{$P}cas", null, Memcached::GET_EXTENDED);
        $s["token"] = $r["cas"] ?? null;
        return [show($r["value"] ?? null), !empty($s["token"])];
    }],
    ["cas_ok", fn($c, &$s) => $c->cas($s["token"], "{$P}cas", "c1")],
    ["cas_conflict", fn($c, &$s) => $c->cas($s["token"], "{$P}cas", "c2")],
    ["get_cas", fn($c, &$s) => show($c->get("{$P}cas"))],
    ["delete_cas", fn($c, &$s) => $c->delete("{$P}cas")],
    ["cas_missing", fn($c, &$s) => $c->cas($s["token"], "{$P}cas", "c3")],
    ["set_flags", function ($c, &$s) use ($P) {
        // User flags go in the upper 16 bits of the item's flags.
        $c->setOption(Memcached::OPT_USER_FLAGS, 0xBEEF);
        $r = $c->set("{$P}flags", "flagged");
        $c->setOption(Memcached::OPT_USER_FLAGS, -1);
        return $r;
    }],
    ["get_flags", function ($c, &$s) use ($P) {
        $r = $c->get("{$P}flags", null, Memcached::GET_EXTENDED);
        return is_array($r) ? [show($r["value"]), $r["flags"]] : $r;
    }],
    ["set_maxkey", fn($c, &$s) => $c->set($maxkey, "longest key")],
    ["get_maxkey", fn($c, &$s) => show($c->get($maxkey))],
    ["get_multi_maxkey", fn($c, &$s) => $multi_result($c->getMulti([$maxkey, "{$P}v100k"]))],
    ["set_ttl", fn($c, &$s) => $c->set("{$P}ttl", "short", TTL)],
    ["get_ttl_before", fn($c, &$s) => show($c->get("{$P}ttl"))],
    ["sleep", null],
    ["get_ttl_after", fn($c, &$s) => show($c->get("{$P}ttl"))],
    ["get_touched_after", fn($c, &$s) => show($c->get("{$P}touch"))],
    ["noreply_ops", function ($c, &$s) use ($P, $multi_result) {
        // OPT_NOREPLY: text "noreply", binary quiet opcodes; then a get on
        // the same connection that must see them all.
        $n = $s["noreply"];
        $n->set("{$P}nr1", "a");
        $n->set("{$P}nr2", "b");
        $n->delete("{$P}nr2");
        $n->set("{$P}nr3", "10");
        $n->increment("{$P}nr3", 5);
        $n->append("{$P}nr1", "z");
        return $multi_result($n->getMulti(["{$P}nr1", "{$P}nr2", "{$P}nr3"]));
    }],
    ["sequential_500", function ($c, &$s) use ($P) {
        $good = 0;
        for ($i = 0; $i < 500; $i++) {
            $k = "{$P}seq$i";
            if ($c->set($k, "s$i") && $c->get($k) === "s$i") $good++;
        }
        return $good;
    }],
];
if ($binary) {
    // An initial value (the counter is created when missing) is a binary-protocol feature.
    $steps[] = ["incr_initial", fn($c, &$s) => $c->increment("{$P}counter_new", 1, 7)];
    $steps[] = ["incr_initial_again", fn($c, &$s) => $c->increment("{$P}counter_new", 1, 7)];
}

$clients = array_map(fn($a) => client($a, $binary), $addrs);
$states = array_map(fn($a) => ["noreply" => client($a, $binary, true)], $addrs);
foreach ($steps as [$name, $fn]) {
    if ($fn === null) {
        usleep(TTL_SLEEP_US);
        continue;
    }
    foreach ($clients as $t => $c) {
        $r = $fn($c, $states[$t]);
        echo json_encode(["t" => $t, "op" => $name, "r" => [$r, $c->getResultCode()]],
                         JSON_UNESCAPED_SLASHES | JSON_PARTIAL_OUTPUT_ON_ERROR), "\n";
    }
}
