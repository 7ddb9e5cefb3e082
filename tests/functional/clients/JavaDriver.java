// The client-library workload (see test_client_libraries.py) for Java's
// spymemcached (Debian's libspymemcached-java 2.12; text, or binary with
// BinaryConnectionFactory's protocol). Compiled at test time:
//
//     javac -cp /usr/share/java/spymemcached.jar -d DIR JavaDriver.java
//     java -cp DIR:/usr/share/java/spymemcached.jar JavaDriver text|binary PREFIX HOST:PORT...
//
// Runs each step against every HOST:PORT in turn (so the TTL sleep is shared)
// and prints one JSON line per step and target: {"t": i, "op": name, "r": result}.
// A store's result is [Boolean, status code, status message]: the message is
// the server's reply line (text) or error body (binary), which ithaca repeats
// byte for byte.

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import net.spy.memcached.CASValue;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.CachedData;
import net.spy.memcached.internal.OperationFuture;
import net.spy.memcached.transcoders.SerializingTranscoder;
import net.spy.memcached.transcoders.Transcoder;

public class JavaDriver {
    static final int TTL = 2;
    static final long TTL_SLEEP_MS = 3200;
    static final long WAIT_S = 10;

    interface Step {
        Object run(MemcachedClient c, Map<String, Object> s) throws Exception;
    }

    /** Raw flags and bytes, for the flags round trip. */
    static final class Raw {
        final int flags;
        final byte[] data;

        Raw(int flags, byte[] data) {
            this.flags = flags;
            this.data = data;
        }
    }

    static final class RawTranscoder implements Transcoder<Raw> {
        public boolean asyncDecode(CachedData d) { return false; }
        public CachedData encode(Raw r) { return new CachedData(r.flags, r.data, getMaxSize()); }
        public Raw decode(CachedData d) { return new Raw(d.getFlags(), d.getData()); }
        public int getMaxSize() { return CachedData.MAX_SIZE; }
    }

    static String makeValue(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < n; i++) b.append(i).append('.');
        return b.substring(0, n);
    }

    static Object show(Object v) throws Exception {
        if (v instanceof Raw) {
            Raw r = (Raw) v;
            return Arrays.asList(show(new String(r.data, StandardCharsets.ISO_8859_1)), (long) r.flags & 0xffffffffL);
        }
        if (!(v instanceof String)) return v;
        String s = (String) v;
        if (s.length() <= 64) return s;
        byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.ISO_8859_1));
        StringBuilder hex = new StringBuilder();
        for (byte x : d) hex.append(String.format("%02x", x));
        return "<" + s.length() + " bytes md5 " + hex + ">";
    }

    static Object op(OperationFuture<Boolean> f) throws Exception {
        Boolean ok = f.get(WAIT_S, TimeUnit.SECONDS);
        return Arrays.asList(ok, String.valueOf(f.getStatus().getStatusCode()), f.getStatus().getMessage());
    }

    static MemcachedClient client(String addr, boolean binary) throws Exception {
        SerializingTranscoder tc = new SerializingTranscoder();
        // Off so that the large values cross the wire at full size.
        tc.setCompressionThreshold(Integer.MAX_VALUE);
        ConnectionFactoryBuilder b = new ConnectionFactoryBuilder()
                .setProtocol(binary ? ConnectionFactoryBuilder.Protocol.BINARY : ConnectionFactoryBuilder.Protocol.TEXT)
                .setOpTimeout(WAIT_S * 1000).setTranscoder(tc).setFailureMode(FailureMode.Cancel);
        String[] hp = addr.split(":");
        return new MemcachedClient(b.build(),
                Collections.singletonList(new InetSocketAddress(hp[0], Integer.parseInt(hp[1]))));
    }

    public static void main(String[] args) throws Exception {
        boolean binary = args[0].equals("binary");
        String P = args[1];
        List<String> addrs = Arrays.asList(args).subList(2, args.length);
        String big100 = makeValue(100000), big900 = makeValue(900000);
        String maxkey = P + "maxkey" + "k".repeat(250 - P.length() - "maxkey".length());
        List<String> multi = new ArrayList<>();
        for (int i = 0; i < 50; i++) multi.add(P + "m" + i);
        RawTranscoder raw = new RawTranscoder();
        // Every byte value, then reply lines a careless proxy might parse as its own.
        byte[] tail = "\r\nEND\r\nVALUE x 0 1\r\nx\r\nEND\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] nasty = new byte[256 + tail.length];
        for (int i = 0; i < 256; i++) nasty[i] = (byte) i;
        System.arraycopy(tail, 0, nasty, 256, tail.length);

        List<Object[]> steps = new ArrayList<>();
        java.util.function.BiConsumer<String, Step> add = (name, fn) -> steps.add(new Object[] {name, fn});
        add.accept("set_small", (c, s) -> op(c.set(P + "small", 0, "hello world")));
        add.accept("get_small", (c, s) -> show(c.get(P + "small")));
        add.accept("get_missing", (c, s) -> show(c.get(P + "missing")));
        add.accept("set_100k", (c, s) -> op(c.set(P + "v100k", 0, big100)));
        add.accept("get_100k", (c, s) -> show(c.get(P + "v100k")));
        add.accept("set_900k", (c, s) -> op(c.set(P + "v900k", 0, big900)));
        add.accept("get_900k", (c, s) -> show(c.get(P + "v900k")));
        add.accept("set_empty", (c, s) -> op(c.set(P + "empty", 0, "")));
        add.accept("get_empty", (c, s) -> show(c.get(P + "empty")));
        add.accept("set_binary", (c, s) -> op(c.set(P + "binary", 0, new Raw(0, nasty), raw)));
        add.accept("get_binary", (c, s) -> show(c.get(P + "binary", raw)));
        add.accept("get_multi_big", (c, s) -> bulk(P, c.getBulk(P + "small", P + "v100k", P + "v900k", P + "missing")));
        add.accept("set_multi_keys", (c, s) -> {
            // Sent without waiting: spymemcached pipelines them on its one connection.
            List<OperationFuture<Boolean>> fs = new ArrayList<>();
            for (int i = 0; i < 50; i++) if (i % 5 != 0) fs.add(c.set(multi.get(i), 0, "mv" + i));
            List<Object> out = new ArrayList<>();
            for (OperationFuture<Boolean> f : fs) out.add(op(f));
            return out;
        });
        add.accept("get_multi_50", (c, s) -> bulk(P, c.getBulk(multi)));
        add.accept("add_existing", (c, s) -> op(c.add(P + "small", 0, "other")));
        add.accept("add_new", (c, s) -> op(c.add(P + "add_new", 0, "fresh")));
        add.accept("get_add_new", (c, s) -> show(c.get(P + "add_new")));
        add.accept("replace_existing", (c, s) -> op(c.replace(P + "small", 0, "replaced")));
        add.accept("replace_missing", (c, s) -> op(c.replace(P + "replace_missing", 0, "x")));
        add.accept("get_replaced", (c, s) -> show(c.get(P + "small")));
        add.accept("set_append", (c, s) -> op(c.set(P + "append", 0, "mid")));
        add.accept("append", (c, s) -> op(c.append(P + "append", "_end")));
        add.accept("prepend", (c, s) -> op(c.prepend(P + "append", "start_")));
        add.accept("get_append", (c, s) -> show(c.get(P + "append")));
        add.accept("append_missing", (c, s) -> op(c.append(P + "append_missing", "x")));
        add.accept("prepend_missing", (c, s) -> op(c.prepend(P + "append_missing", "x")));
        add.accept("set_counter", (c, s) -> op(c.set(P + "counter", 0, "10")));
        add.accept("incr", (c, s) -> c.incr(P + "counter", 5L));
        add.accept("decr", (c, s) -> c.decr(P + "counter", 3L));
        add.accept("decr_below_zero", (c, s) -> c.decr(P + "counter", 100L));
        add.accept("get_counter", (c, s) -> show(c.get(P + "counter")));
        add.accept("incr_missing", (c, s) -> c.incr(P + "counter_missing", 1L));
        add.accept("decr_missing", (c, s) -> c.decr(P + "counter_missing", 1L));
        // With a default: binary sends it in the request; text sends incr, then add.
        add.accept("incr_initial", (c, s) -> c.incr(P + "counter_new", 1L, 7L));
        add.accept("incr_initial_again", (c, s) -> c.incr(P + "counter_new", 1L, 7L));
        add.accept("decr_initial", (c, s) -> c.decr(P + "counter_new2", 1L, 7L, TTL));
        add.accept("get_counter_new", (c, s) -> show(c.get(P + "counter_new")));
        // Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
        add.accept("set_counter_large", (c, s) -> op(c.set(P + "counter", 0, "9223372036854775806")));
        add.accept("incr_large", (c, s) -> c.incr(P + "counter", 1L));
        add.accept("delete_existing", (c, s) -> op(c.delete(P + "small")));
        add.accept("get_deleted", (c, s) -> show(c.get(P + "small")));
        add.accept("delete_missing", (c, s) -> op(c.delete(P + "small")));
        add.accept("set_touch", (c, s) -> op(c.set(P + "touch", 0, "t")));
        add.accept("touch", (c, s) -> op(c.touch(P + "touch", TTL)));
        add.accept("touch_missing", (c, s) -> op(c.touch(P + "touch_missing", TTL)));
        add.accept("get_touched", (c, s) -> show(c.get(P + "touch")));
        add.accept("set_cas", (c, s) -> op(c.set(P + "cas", 0, "c0")));
        add.accept("gets", (c, s) -> {
            CASValue<Object> v = c.gets(P + "cas");
            s.put("token", v == null ? 0L : v.getCas());
            return Arrays.asList(v == null ? null : show(v.getValue()), v != null && v.getCas() != 0);
        });
        add.accept("cas_ok", (c, s) -> String.valueOf(c.cas(P + "cas", (Long) s.get("token"), "c1")));
        add.accept("cas_conflict", (c, s) -> String.valueOf(c.cas(P + "cas", (Long) s.get("token"), "c2")));
        add.accept("get_cas", (c, s) -> show(c.get(P + "cas")));
        add.accept("delete_cas", (c, s) -> op(c.delete(P + "cas")));
        add.accept("cas_missing", (c, s) -> String.valueOf(c.cas(P + "cas", (Long) s.get("token"), "c3")));
        // A positive int: text spymemcached sends the flags as a signed int, and memcached refuses "-1".
        add.accept("set_flags", (c, s) ->
                op(c.set(P + "flags", 0, new Raw(0x5EADBEEF, "flagged".getBytes(StandardCharsets.US_ASCII)), raw)));
        add.accept("get_flags", (c, s) -> show(c.get(P + "flags", raw)));
        add.accept("set_maxkey", (c, s) -> op(c.set(maxkey, 0, "longest key")));
        add.accept("get_maxkey", (c, s) -> show(c.get(maxkey)));
        add.accept("get_multi_maxkey", (c, s) -> bulk(P, c.getBulk(maxkey, P + "v100k")));
        add.accept("set_ttl", (c, s) -> op(c.set(P + "ttl", TTL, "short")));
        add.accept("get_ttl_before", (c, s) -> show(c.get(P + "ttl")));
        add.accept("sleep", null);
        add.accept("get_ttl_after", (c, s) -> show(c.get(P + "ttl")));
        add.accept("get_touched_after", (c, s) -> show(c.get(P + "touch")));
        add.accept("get_counter_new2_after", (c, s) -> show(c.get(P + "counter_new2")));
        add.accept("sequential_500", (c, s) -> {
            int good = 0;
            for (int i = 0; i < 500; i++) {
                String k = P + "seq" + i;
                if (c.set(k, 0, "s" + i).get(WAIT_S, TimeUnit.SECONDS) && ("s" + i).equals(c.get(k))) good++;
            }
            return good;
        });
        add.accept("pipelined_200", (c, s) -> {
            // 200 sets then 200 gets in flight at once on the one connection.
            List<OperationFuture<Boolean>> sets = new ArrayList<>();
            for (int i = 0; i < 200; i++) sets.add(c.set(P + "pipe" + i, 0, makeValue(10 + 37 * i)));
            List<Future<Object>> gets = new ArrayList<>();
            for (int i = 0; i < 200; i++) gets.add(c.asyncGet(P + "pipe" + i));
            int good = 0;
            for (int i = 0; i < 200; i++) {
                if (sets.get(i).get(WAIT_S, TimeUnit.SECONDS)
                        && makeValue(10 + 37 * i).equals(gets.get(i).get(WAIT_S, TimeUnit.SECONDS))) good++;
            }
            return good;
        });
        add.accept("concurrent_4x100", (c, s) -> {
            // Four threads share the client (and its one connection).
            int[] good = new int[4];
            List<Thread> ts = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                final int wf = w;
                Thread t = new Thread(() -> {
                    try {
                        for (int i = 0; i < 100; i++) {
                            String k = P + "conc" + wf + "-" + i, v = makeValue(1000 + 97 * i);
                            if (c.set(k, 0, v).get(WAIT_S, TimeUnit.SECONDS) && v.equals(c.get(k))) good[wf]++;
                        }
                    } catch (Exception e) {
                        good[wf] = -1;
                    }
                });
                ts.add(t);
                t.start();
            }
            for (Thread t : ts) t.join();
            return Arrays.asList(good[0], good[1], good[2], good[3]);
        });

        List<MemcachedClient> clients = new ArrayList<>();
        List<Map<String, Object>> states = new ArrayList<>();
        for (String a : addrs) {
            clients.add(client(a, binary));
            states.add(new TreeMap<>());
        }
        StringBuilder line = new StringBuilder();
        for (Object[] st : steps) {
            String name = (String) st[0];
            Step fn = (Step) st[1];
            if (fn == null) {
                Thread.sleep(TTL_SLEEP_MS);
                continue;
            }
            for (int t = 0; t < clients.size(); t++) {
                Object r;
                try {
                    r = fn.run(clients.get(t), states.get(t));
                } catch (Exception e) {
                    r = Collections.singletonMap("error", e.getClass().getSimpleName());
                }
                line.setLength(0);
                line.append("{\"t\": ").append(t).append(", \"op\": ");
                json(line, name);
                line.append(", \"r\": ");
                json(line, r);
                line.append('}');
                System.out.println(line);
            }
        }
        System.out.flush();
        for (MemcachedClient c : clients) c.shutdown(5, TimeUnit.SECONDS);
        System.exit(0);
    }

    static Object bulk(String P, Map<String, Object> found) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, Object> e : found.entrySet()) out.put(e.getKey().substring(P.length()), show(e.getValue()));
        return out;
    }

    static void json(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String) {
            b.append('"');
            for (char ch : ((String) v).toCharArray()) {
                if (ch == '"' || ch == '\\') b.append('\\').append(ch);
                else if (ch < 0x20 || ch > 0x7e) b.append(String.format("\\u%04x", (int) ch));
                else b.append(ch);
            }
            b.append('"');
        } else if (v instanceof Boolean || v instanceof Number) {
            b.append(v);
        } else if (v instanceof List) {
            b.append('[');
            String sep = "";
            for (Object x : (List<?>) v) {
                b.append(sep);
                json(b, x);
                sep = ", ";
            }
            b.append(']');
        } else if (v instanceof Map) {
            b.append('{');
            String sep = "";
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                b.append(sep);
                json(b, String.valueOf(e.getKey()));
                b.append(": ");
                json(b, e.getValue());
                sep = ", ";
            }
            b.append('}');
        } else {
            json(b, v.getClass().getSimpleName() + ":" + v);
        }
    }
}
