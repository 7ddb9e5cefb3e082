# The client-library workload (see test_client_libraries.py) for Ruby's Dalli
# (3.0.6, Debian's ruby-dalli: the binary protocol only).
#
#     ruby ruby_driver.rb PREFIX HOST:PORT...
#
# Runs each step against every HOST:PORT in turn (so the TTL sleep is shared)
# and prints one JSON line per step and target: {"t": i, "op": name, "r": result}.

require 'dalli'
require 'digest/md5'
require 'json'
require 'logger'

TTL = 2
TTL_SLEEP = 3.2

# Stores strings as they are (Dalli's default is Marshal), so that append,
# prepend and incr see the bytes the workload wrote.
module PlainSerializer
  def self.dump(value) = value.to_s
  def self.load(value) = value
end

def make_value(n)
  out = +''
  i = 0
  while out.bytesize < n
    out << "#{i}."
    i += 1
  end
  out[0, n]
end

def show(v)
  return v unless v.is_a?(String)
  return "<#{v.bytesize} bytes md5 #{Digest::MD5.hexdigest(v)}>" if v.bytesize > 64

  v
end

def client(addr)
  # compress: false so that the large values cross the wire at full size.
  Dalli::Client.new(addr, serializer: PlainSerializer, compress: false, socket_timeout: 10,
                          socket_max_failures: 0, down_retry_delay: 0)
end

Dalli.logger = Logger.new($stderr, level: Logger::WARN)
prefix = ARGV[0]
addrs = ARGV[1..]
P = prefix
# Every byte value, then reply lines a careless proxy might parse as its own.
NASTY = ((0..255).map(&:chr).join + "\r\nEND\r\nVALUE x 0 1\r\nx\r\nEND\r\n").b
big100 = make_value(100_000)
big900 = make_value(900_000)
maxkey = "#{P}maxkey" + 'k' * (250 - P.bytesize - 'maxkey'.bytesize)
multi = (0...50).map { |i| "#{P}m#{i}" }

multi_result = lambda do |found|
  found.to_h { |k, v| [k[P.bytesize..], show(v)] }.sort.to_h
end

# Dalli's stores answer the new CAS (an Integer, different on every server),
# false (not stored), or the reply's CAS 0 for a missing key (replace, set_cas):
# a store's result is true for a CAS token, else what Dalli returned.
stored = ->(r) { r.is_a?(Integer) && r.positive? ? true : r }

steps = [
  ['set_small', ->(c, _s) { stored.(c.set("#{P}small", 'hello world')) }],
  ['get_small', ->(c, _s) { show(c.get("#{P}small")) }],
  ['get_missing', ->(c, _s) { show(c.get("#{P}missing")) }],
  ['set_100k', ->(c, _s) { stored.(c.set("#{P}v100k", big100)) }],
  ['get_100k', ->(c, _s) { show(c.get("#{P}v100k")) }],
  ['set_900k', ->(c, _s) { stored.(c.set("#{P}v900k", big900)) }],
  ['get_900k', ->(c, _s) { show(c.get("#{P}v900k")) }],
  ['set_empty', ->(c, _s) { stored.(c.set("#{P}empty", '')) }],
  ['get_empty', ->(c, _s) { show(c.get("#{P}empty")) }],
  ['set_binary', ->(c, _s) { stored.(c.set("#{P}binary", NASTY)) }],
  ['get_binary', ->(c, _s) { show(c.get("#{P}binary")) }],
  ['get_multi_big', ->(c, _s) { multi_result.(c.get_multi("#{P}small", "#{P}v100k", "#{P}v900k", "#{P}missing")) }],
  ['set_multi_keys', ->(c, _s) { multi.each_with_index.reject { |_, i| (i % 5).zero? }.map { |k, i| stored.(c.set(k, "mv#{i}")) } }],
  ['get_multi_50', ->(c, _s) { multi_result.(c.get_multi(multi)) }],
  ['add_existing', ->(c, _s) { stored.(c.add("#{P}small", 'other')) }],
  ['add_new', ->(c, _s) { stored.(c.add("#{P}add_new", 'fresh')) }],
  ['get_add_new', ->(c, _s) { show(c.get("#{P}add_new")) }],
  ['replace_existing', ->(c, _s) { stored.(c.replace("#{P}small", 'replaced')) }],
  ['replace_missing', ->(c, _s) { stored.(c.replace("#{P}replace_missing", 'x')) }],
  ['get_replaced', ->(c, _s) { show(c.get("#{P}small")) }],
  ['set_append', ->(c, _s) { stored.(c.set("#{P}append", 'mid')) }],
  ['append', ->(c, _s) { stored.(c.append("#{P}append", '_end')) }],
  ['prepend', ->(c, _s) { stored.(c.prepend("#{P}append", 'start_')) }],
  ['get_append', ->(c, _s) { show(c.get("#{P}append")) }],
  ['append_missing', ->(c, _s) { stored.(c.append("#{P}append_missing", 'x')) }],
  ['prepend_missing', ->(c, _s) { stored.(c.prepend("#{P}append_missing", 'x')) }],
  ['set_counter', ->(c, _s) { stored.(c.set("#{P}counter", '10')) }],
  ['incr', ->(c, _s) { c.incr("#{P}counter", 5) }],
  ['decr', ->(c, _s) { c.decr("#{P}counter", 3) }],
  ['decr_below_zero', ->(c, _s) { c.decr("#{P}counter", 100) }],
  ['get_counter', ->(c, _s) { show(c.get("#{P}counter")) }],
  ['incr_missing', ->(c, _s) { c.incr("#{P}counter_missing", 1) }],
  ['decr_missing', ->(c, _s) { c.decr("#{P}counter_missing", 1) }],
  ['incr_initial', ->(c, _s) { c.incr("#{P}counter_new", 1, nil, 7) }],
  ['incr_initial_again', ->(c, _s) { c.incr("#{P}counter_new", 1, nil, 7) }],
  ['decr_initial', ->(c, _s) { c.decr("#{P}counter_new2", 1, nil, 7) }],
  ['get_counter_new', ->(c, _s) { show(c.get("#{P}counter_new")) }],
  # Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
  ['set_counter_large', ->(c, _s) { stored.(c.set("#{P}counter", '9223372036854775806')) }],
  ['incr_large', ->(c, _s) { c.incr("#{P}counter", 1) }],
  ['delete_existing', ->(c, _s) { c.delete("#{P}small") }],
  ['get_deleted', ->(c, _s) { show(c.get("#{P}small")) }],
  ['delete_missing', ->(c, _s) { c.delete("#{P}small") }],
  ['set_touch', ->(c, _s) { stored.(c.set("#{P}touch", 't')) }],
  ['touch', ->(c, _s) { c.touch("#{P}touch", TTL) }],
  ['touch_missing', ->(c, _s) { c.touch("#{P}touch_missing", TTL) }],
  ['gat', ->(c, _s) { show(c.gat("#{P}touch", TTL)) }],
  ['gat_missing', ->(c, _s) { show(c.gat("#{P}touch_missing", TTL)) }],
  ['get_touched', ->(c, _s) { show(c.get("#{P}touch")) }],
  ['set_cas', ->(c, _s) { stored.(c.set("#{P}cas", 'c0')) }],
  ['gets', lambda { |c, s|
    value, s[:token] = c.get_cas("#{P}cas")
    [show(value), s[:token].is_a?(Integer) && s[:token].positive?]
  }],
  ['cas_ok', ->(c, s) { stored.(c.set_cas("#{P}cas", 'c1', s[:token])) }],
  ['cas_conflict', ->(c, s) { stored.(c.set_cas("#{P}cas", 'c2', s[:token])) }],
  ['get_cas', ->(c, _s) { show(c.get("#{P}cas")) }],
  ['cas_block', ->(c, _s) { stored.(c.cas("#{P}cas") { |v| "#{v}+block" }) }],
  ['get_cas_block', ->(c, _s) { show(c.get("#{P}cas")) }],
  ['delete_cas', ->(c, _s) { c.delete("#{P}cas") }],
  ['cas_missing', ->(c, s) { stored.(c.set_cas("#{P}cas", 'c3', s[:token])) }],
  ['get_multi_cas', lambda { |c, _s|
    c.get_multi_cas("#{P}append", "#{P}missing").to_h { |k, (v, cas)| [k[P.bytesize..], [show(v), cas.positive?]] }
  }],
  ['set_maxkey', ->(c, _s) { stored.(c.set(maxkey, 'longest key')) }],
  ['get_maxkey', ->(c, _s) { show(c.get(maxkey)) }],
  ['get_multi_maxkey', ->(c, _s) { multi_result.(c.get_multi(maxkey, "#{P}v100k")) }],
  ['set_ttl', ->(c, _s) { stored.(c.set("#{P}ttl", 'short', TTL)) }],
  ['get_ttl_before', ->(c, _s) { show(c.get("#{P}ttl")) }],
  ['sleep', nil],
  ['get_ttl_after', ->(c, _s) { show(c.get("#{P}ttl")) }],
  ['get_touched_after', ->(c, _s) { show(c.get("#{P}touch")) }],
  ['quiet_ops', lambda { |c, _s|
    # Dalli's multi block: quiet opcodes (setq, deleteq, incrq, appendq), one
    # noop at the end; then a get that must see them all.
    c.multi do
      c.set("#{P}nr1", 'a')
      c.set("#{P}nr2", 'b')
      c.delete("#{P}nr2")
      c.set("#{P}nr3", '10')
      c.incr("#{P}nr3", 5)
      c.append("#{P}nr1", 'z')
      c.add("#{P}nr1", 'not added')
    end
    multi_result.(c.get_multi("#{P}nr1", "#{P}nr2", "#{P}nr3"))
  }],
  ['sequential_500', lambda { |c, _s|
    (0...500).count { |i| c.set("#{P}seq#{i}", "s#{i}") && c.get("#{P}seq#{i}") == "s#{i}" }
  }],
  ['concurrent_4x100', lambda { |_c, s|
    (0...4).map do |w|
      Thread.new do
        wc = client(s[:addr])
        (0...100).count do |i|
          k = "#{P}conc#{w}-#{i}"
          v = make_value(1000 + 97 * i)
          wc.set(k, v) && wc.get(k) == v
        end
      end
    end.map(&:value)
  }]
]

clients = addrs.map { |a| client(a) }
states = addrs.map { |a| { addr: a } }
$stdout.sync = true
steps.each do |name, fn|
  if fn.nil?
    sleep TTL_SLEEP
    next
  end
  clients.each_with_index do |c, t|
    r = begin
      fn.(c, states[t])
    rescue StandardError => e
      { error: e.class.name }
    end
    puts JSON.generate({ t: t, op: name, r: r })
  end
end
