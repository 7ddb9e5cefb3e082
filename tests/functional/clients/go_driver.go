// The client-library workload (see test_client_libraries.py) for Go's
// github.com/bradfitz/gomemcache (Debian's 2014 snapshot; text protocol, no
// append/prepend). Built at test time with GO111MODULE=off and
// GOPATH=/usr/share/gocode, offline.
//
//	go_driver PREFIX HOST:PORT...
//
// Runs each step against every HOST:PORT in turn (so the TTL sleep is shared)
// and prints one JSON line per step and target: {"t": i, "op": name, "r": result}.
// An error result is the library's error text (its errors are fixed strings
// such as "memcache: cache miss").
package main

import (
	"crypto/md5"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

const ttl = 2
const ttlSleep = 3200 * time.Millisecond

func makeValue(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d.", i)
	}
	return b.String()[:n]
}

func show(v []byte) interface{} {
	if v == nil {
		return nil
	}
	if len(v) > 64 {
		return fmt.Sprintf("<%d bytes md5 %x>", len(v), md5.Sum(v))
	}
	return string(v)
}

// res is what a call returns: its value, or its error's text.
func res(v interface{}, err error) interface{} {
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	return v
}

func client(addr string) *memcache.Client {
	c := memcache.New(addr)
	c.Timeout = 10 * time.Second
	return c
}

type state struct {
	addr string
	item *memcache.Item // from the last Get, with its CAS
}

type step struct {
	name string
	fn   func(c *memcache.Client, s *state) interface{}
}

func main() {
	P := os.Args[1]
	addrs := os.Args[2:]
	big100, big900 := makeValue(100000), makeValue(900000)
	// Every byte value, then reply lines a careless proxy might parse as its own.
	nasty := make([]byte, 0, 300)
	for i := 0; i < 256; i++ {
		nasty = append(nasty, byte(i))
	}
	nasty = append(nasty, "\r\nEND\r\nVALUE x 0 1\r\nx\r\nEND\r\n"...)
	maxkey := P + "maxkey" + strings.Repeat("k", 250-len(P)-len("maxkey"))
	var multi []string
	for i := 0; i < 50; i++ {
		multi = append(multi, fmt.Sprintf("%sm%d", P, i))
	}

	set := func(c *memcache.Client, k, v string, exp int32) interface{} {
		return res(true, c.Set(&memcache.Item{Key: k, Value: []byte(v), Expiration: exp}))
	}
	get := func(c *memcache.Client, k string) interface{} {
		it, err := c.Get(k)
		if err != nil {
			return res(nil, err)
		}
		return show(it.Value)
	}
	getMulti := func(c *memcache.Client, keys []string) interface{} {
		found, err := c.GetMulti(keys)
		out := map[string]interface{}{}
		for k, it := range found {
			out[k[len(P):]] = show(it.Value)
		}
		return res(out, err)
	}

	cas := func(c *memcache.Client, s *state, v string) interface{} {
		if s.item == nil {
			return map[string]string{"error": "no item from gets"}
		}
		s.item.Value = []byte(v)
		return res(true, c.CompareAndSwap(s.item))
	}

	steps := []step{
		{"set_small", func(c *memcache.Client, s *state) interface{} { return set(c, P+"small", "hello world", 0) }},
		{"get_small", func(c *memcache.Client, s *state) interface{} { return get(c, P+"small") }},
		{"get_missing", func(c *memcache.Client, s *state) interface{} { return get(c, P+"missing") }},
		{"set_100k", func(c *memcache.Client, s *state) interface{} { return set(c, P+"v100k", big100, 0) }},
		{"get_100k", func(c *memcache.Client, s *state) interface{} { return get(c, P+"v100k") }},
		{"set_900k", func(c *memcache.Client, s *state) interface{} { return set(c, P+"v900k", big900, 0) }},
		{"get_900k", func(c *memcache.Client, s *state) interface{} { return get(c, P+"v900k") }},
		{"set_empty", func(c *memcache.Client, s *state) interface{} { return set(c, P+"empty", "", 0) }},
		{"get_empty", func(c *memcache.Client, s *state) interface{} { return get(c, P+"empty") }},
		{"set_binary", func(c *memcache.Client, s *state) interface{} { return set(c, P+"binary", string(nasty), 0) }},
		{"get_binary", func(c *memcache.Client, s *state) interface{} { return get(c, P+"binary") }},
		{"get_multi_big", func(c *memcache.Client, s *state) interface{} {
			return getMulti(c, []string{P + "small", P + "v100k", P + "v900k", P + "missing"})
		}},
		{"set_multi_keys", func(c *memcache.Client, s *state) interface{} {
			var out []interface{}
			for i, k := range multi {
				if i%5 != 0 {
					out = append(out, set(c, k, fmt.Sprintf("mv%d", i), 0))
				}
			}
			return out
		}},
		{"get_multi_50", func(c *memcache.Client, s *state) interface{} { return getMulti(c, multi) }},
		{"add_existing", func(c *memcache.Client, s *state) interface{} {
			return res(true, c.Add(&memcache.Item{Key: P + "small", Value: []byte("other")}))
		}},
		{"add_new", func(c *memcache.Client, s *state) interface{} {
			return res(true, c.Add(&memcache.Item{Key: P + "add_new", Value: []byte("fresh")}))
		}},
		{"get_add_new", func(c *memcache.Client, s *state) interface{} { return get(c, P+"add_new") }},
		{"replace_existing", func(c *memcache.Client, s *state) interface{} {
			return res(true, c.Replace(&memcache.Item{Key: P + "small", Value: []byte("replaced")}))
		}},
		{"replace_missing", func(c *memcache.Client, s *state) interface{} {
			return res(true, c.Replace(&memcache.Item{Key: P + "replace_missing", Value: []byte("x")}))
		}},
		{"get_replaced", func(c *memcache.Client, s *state) interface{} { return get(c, P+"small") }},
		{"set_counter", func(c *memcache.Client, s *state) interface{} { return set(c, P+"counter", "10", 0) }},
		{"incr", func(c *memcache.Client, s *state) interface{} { return res(c.Increment(P+"counter", 5)) }},
		{"decr", func(c *memcache.Client, s *state) interface{} { return res(c.Decrement(P+"counter", 3)) }},
		{"decr_below_zero", func(c *memcache.Client, s *state) interface{} { return res(c.Decrement(P+"counter", 100)) }},
		{"get_counter", func(c *memcache.Client, s *state) interface{} { return get(c, P+"counter") }},
		{"incr_missing", func(c *memcache.Client, s *state) interface{} { return res(c.Increment(P+"counter_missing", 1)) }},
		{"decr_missing", func(c *memcache.Client, s *state) interface{} { return res(c.Decrement(P+"counter_missing", 1)) }},
		// Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
		{"set_counter_large", func(c *memcache.Client, s *state) interface{} {
			return set(c, P+"counter", "9223372036854775806", 0)
		}},
		{"incr_large", func(c *memcache.Client, s *state) interface{} { return res(c.Increment(P+"counter", 1)) }},
		{"delete_existing", func(c *memcache.Client, s *state) interface{} { return res(true, c.Delete(P+"small")) }},
		{"get_deleted", func(c *memcache.Client, s *state) interface{} { return get(c, P+"small") }},
		{"delete_missing", func(c *memcache.Client, s *state) interface{} { return res(true, c.Delete(P+"small")) }},
		{"set_touch", func(c *memcache.Client, s *state) interface{} { return set(c, P+"touch", "t", 0) }},
		{"touch", func(c *memcache.Client, s *state) interface{} { return res(true, c.Touch(P+"touch", ttl)) }},
		{"touch_missing", func(c *memcache.Client, s *state) interface{} { return res(true, c.Touch(P+"touch_missing", ttl)) }},
		{"get_touched", func(c *memcache.Client, s *state) interface{} { return get(c, P+"touch") }},
		{"set_cas", func(c *memcache.Client, s *state) interface{} { return set(c, P+"cas", "c0", 0) }},
		{"gets", func(c *memcache.Client, s *state) interface{} {
			// Get reads with `gets`: the item keeps its CAS for CompareAndSwap.
			it, err := c.Get(P + "cas")
			s.item = it
			if err != nil {
				return res(nil, err)
			}
			return show(it.Value)
		}},
		{"cas_ok", func(c *memcache.Client, s *state) interface{} {
			return cas(c, s, "c1")
		}},
		{"cas_conflict", func(c *memcache.Client, s *state) interface{} {
			return cas(c, s, "c2")
		}},
		{"get_cas", func(c *memcache.Client, s *state) interface{} { return get(c, P+"cas") }},
		{"delete_cas", func(c *memcache.Client, s *state) interface{} { return res(true, c.Delete(P+"cas")) }},
		{"cas_missing", func(c *memcache.Client, s *state) interface{} {
			return cas(c, s, "c3")
		}},
		{"set_flags", func(c *memcache.Client, s *state) interface{} {
			return res(true, c.Set(&memcache.Item{Key: P + "flags", Value: []byte("flagged"), Flags: 0xDEADBEEF}))
		}},
		{"get_flags", func(c *memcache.Client, s *state) interface{} {
			it, err := c.Get(P + "flags")
			if err != nil {
				return res(nil, err)
			}
			return []interface{}{show(it.Value), it.Flags}
		}},
		{"set_maxkey", func(c *memcache.Client, s *state) interface{} { return set(c, maxkey, "longest key", 0) }},
		{"get_maxkey", func(c *memcache.Client, s *state) interface{} { return get(c, maxkey) }},
		{"get_multi_maxkey", func(c *memcache.Client, s *state) interface{} { return getMulti(c, []string{maxkey, P + "v100k"}) }},
		{"set_ttl", func(c *memcache.Client, s *state) interface{} { return set(c, P+"ttl", "short", ttl) }},
		{"get_ttl_before", func(c *memcache.Client, s *state) interface{} { return get(c, P+"ttl") }},
		{"sleep", nil},
		{"get_ttl_after", func(c *memcache.Client, s *state) interface{} { return get(c, P+"ttl") }},
		{"get_touched_after", func(c *memcache.Client, s *state) interface{} { return get(c, P+"touch") }},
		{"sequential_500", func(c *memcache.Client, s *state) interface{} {
			good := 0
			for i := 0; i < 500; i++ {
				k, v := fmt.Sprintf("%sseq%d", P, i), fmt.Sprintf("s%d", i)
				if set(c, k, v, 0) == true && get(c, k) == v {
					good++
				}
			}
			return good
		}},
		{"concurrent_4x100", func(c *memcache.Client, s *state) interface{} {
			good := make([]int, 4)
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					wc := client(s.addr)
					for i := 0; i < 100; i++ {
						k, v := fmt.Sprintf("%sconc%d-%d", P, w, i), makeValue(1000+97*i)
						if set(wc, k, v, 0) == true && get(wc, k) == show([]byte(v)) {
							good[w]++
						}
					}
				}(w)
			}
			wg.Wait()
			return good
		}},
	}

	clients := make([]*memcache.Client, len(addrs))
	states := make([]*state, len(addrs))
	for t, a := range addrs {
		clients[t], states[t] = client(a), &state{addr: a}
	}
	enc := json.NewEncoder(os.Stdout)
	for _, st := range steps {
		if st.fn == nil {
			time.Sleep(ttlSleep)
			continue
		}
		for t, c := range clients {
			if err := enc.Encode(map[string]interface{}{"t": t, "op": st.name, "r": st.fn(c, states[t])}); err != nil {
				panic(err)
			}
		}
	}
}
