// The stats groups as Prometheus families under memcached_exporter's names.
#include <doctest/doctest.h>

#include <string>

#include "metrics_page.h"

using namespace ithaca::metrics;

namespace {
bool has(const std::string& page, const std::string& line) {
  return page.find("\n" + line + "\n") != std::string::npos;
}
}  // namespace

TEST_CASE("the cache figures carry memcached_exporter's names, types and labels") {
  page_input in;
  in.general = {{"uptime", "12"},
                {"version", "1.6.21-ithaca"},
                {"rusage_user", "1.500000"},
                {"curr_connections", "3"},
                {"total_connections", "9"},
                {"rejected_connections", "1"},
                {"cmd_get", "10"},
                {"cmd_set", "7"},
                {"cmd_flush", "1"},
                {"get_hits", "4"},
                {"get_misses", "6"},
                {"cas_hits", "1"},
                {"cas_misses", "2"},
                {"cas_badval", "1"},
                {"bytes", "100"},
                {"limit_maxbytes", "67108864"},
                {"curr_items", "2"},
                {"total_items", "5"},
                {"evictions", "0"},
                {"reclaimed", "0"},
                {"bytes_read", "55"},
                {"bytes_written", "66"}};
  in.settings = {{"maxconns", "1024"}};
  in.items = {{"items:1:number", "2"}, {"items:1:evicted", "0"}};
  in.slabs = {{"active_slabs", "1"}, {"total_malloced", "4096"}};
  const std::string page = render_page(in);
  CHECK(has(page, "memcached_up 1"));
  CHECK(has(page, "# TYPE memcached_uptime_seconds counter"));
  CHECK(has(page, "memcached_uptime_seconds 12"));
  CHECK(has(page, "memcached_version{version=\"1.6.21-ithaca\"} 1"));
  CHECK(has(page, "memcached_process_user_cpu_seconds_total 1.5"));
  CHECK(has(page, "memcached_commands_total{command=\"get\",status=\"hit\"} 4"));
  CHECK(has(page, "memcached_commands_total{command=\"get\",status=\"miss\"} 6"));
  CHECK(has(page, "memcached_commands_total{command=\"cas\",status=\"badval\"} 1"));
  CHECK(has(page, "memcached_commands_total{command=\"flush\",status=\"hit\"} 1"));
  // cmd_set minus the cas commands it also counts.
  CHECK(has(page, "memcached_commands_total{command=\"set\",status=\"hit\"} 3"));
  CHECK(has(page, "# TYPE memcached_current_connections gauge"));
  CHECK(has(page, "memcached_connections_total 9"));
  CHECK(has(page, "memcached_connections_rejected_total 1"));
  CHECK(has(page, "memcached_max_connections 1024"));
  CHECK(has(page, "memcached_limit_bytes 67108864"));
  CHECK(has(page, "memcached_current_items 2"));
  CHECK(has(page, "memcached_items_total 5"));
  CHECK(has(page, "memcached_read_bytes_total 55"));
  CHECK(has(page, "memcached_written_bytes_total 66"));
  CHECK(has(page, "memcached_slab_current_items{slab=\"1\"} 2"));
  CHECK(has(page, "memcached_slab_items_evicted_total{slab=\"1\"} 0"));
  CHECK(has(page, "memcached_malloced_bytes 4096"));
  // No replication configured: no replication families.
  CHECK(page.find("ithaca_replication") == std::string::npos);
}

TEST_CASE("per-class figures: memcached_exporter's memcached_slab_* with a slab label") {
  page_input in;
  in.items = {{"items:4:number", "90"},           {"items:4:number_cold", "90"}, {"items:4:age", "7"},
              {"items:4:mem_requested", "14580"}, {"items:4:evicted_time", "3"}, {"items:4:hits_to_cold", "11"},
              {"items:19:number", "50"}};
  in.slabs = {{"4:chunk_size", "192"}, {"4:chunks_per_page", "5461"}, {"4:total_pages", "1"},
              {"4:used_chunks", "90"}, {"4:free_chunks", "5371"},     {"4:get_hits", "11"},
              {"4:cmd_set", "102"},    {"4:cas_hits", "1"},           {"4:cas_badval", "1"},
              {"active_slabs", "1"},   {"total_malloced", "4096"}};
  const std::string page = render_page(in);
  CHECK(has(page, "memcached_slab_current_items{slab=\"4\"} 90"));
  CHECK(has(page, "memcached_slab_current_items{slab=\"19\"} 50"));
  CHECK(has(page, "memcached_slab_cold_items{slab=\"4\"} 90"));
  CHECK(has(page, "memcached_slab_items_age_seconds{slab=\"4\"} 7"));
  CHECK(has(page, "memcached_slab_mem_requested_bytes{slab=\"4\"} 14580"));
  CHECK(has(page, "memcached_slab_items_evicted_time_seconds{slab=\"4\"} 3"));
  CHECK(has(page, "memcached_slab_lru_hits_total{slab=\"4\",lru=\"cold\"} 11"));
  CHECK(has(page, "memcached_slab_chunk_size_bytes{slab=\"4\"} 192"));
  CHECK(has(page, "memcached_slab_chunks_per_page{slab=\"4\"} 5461"));
  CHECK(has(page, "memcached_slab_current_pages{slab=\"4\"} 1"));
  CHECK(has(page, "memcached_slab_chunks_used{slab=\"4\"} 90"));
  CHECK(has(page, "memcached_slab_chunks_free{slab=\"4\"} 5371"));
  CHECK(has(page, "memcached_slab_commands_total{slab=\"4\",command=\"get\",status=\"hit\"} 11"));
  CHECK(has(page, "memcached_slab_commands_total{slab=\"4\",command=\"cas\",status=\"badval\"} 1"));
  // cmd_set less the cas commands, as the exporter counts sets.
  CHECK(has(page, "memcached_slab_commands_total{slab=\"4\",command=\"set\",status=\"hit\"} 100"));
  CHECK(has(page, "# TYPE memcached_slab_chunks_used gauge"));
  CHECK(has(page, "# TYPE memcached_slab_items_evicted_time_seconds counter"));
  // active_slabs and total_malloced are no class.
  CHECK(page.find("slab=\"active_slabs\"") == std::string::npos);
  CHECK(page.find("{slab=\"\"}") == std::string::npos);
}

TEST_CASE("pools and servers: labels from the pool names, even with '/' and ':' in them") {
  page_input in;
  in.pools = {{"main:servers", "1"}, {"main:servers_up", "0"}, {"main:replies_found", "4"}, {"a/b:servers", "1"},
              {"a/b:requests", "3"}, {"a:b:servers", "1"},     {"a:b:replies_stored", "2"}};
  in.servers = {{"main/127.0.0.1:11211:state", "down"},
                {"main/127.0.0.1:11211:requests", "5"},
                {"main/127.0.0.1:11211:failures_timeout", "2"},
                {"main/127.0.0.1:11211:inflight", "1"},
                {"a/b/unix:/tmp/s:state", "up"}};
  in.latency = {{"main/127.0.0.1:11211:latency_le_48", "1"},
                {"main/127.0.0.1:11211:latency_le_96", "3"},
                {"main/127.0.0.1:11211:latency_sum_us", "250"},
                {"main/127.0.0.1:11211:latency_count", "4"}};
  const std::string page = render_page(in);
  CHECK(has(page, "ithaca_pool_servers_up{pool=\"main\"} 0"));
  CHECK(has(page, "ithaca_pool_requests_total{pool=\"a/b\"} 3"));
  // replies_<result>: one sample per result, labelled; a pool "a:b" is not pool "a"'s field "b:...".
  CHECK(has(page, "ithaca_pool_reply_results_total{pool=\"main\",result=\"found\"} 4"));
  CHECK(has(page, "ithaca_pool_reply_results_total{pool=\"a:b\",result=\"stored\"} 2"));
  CHECK(page.find("pool=\"a\"") == std::string::npos);
  CHECK(has(page, "ithaca_server_up{pool=\"main\",server=\"127.0.0.1:11211\"} 0"));
  CHECK(has(page, "ithaca_server_up{pool=\"a/b\",server=\"unix:/tmp/s\"} 1"));
  CHECK(has(page, "ithaca_server_requests_total{pool=\"main\",server=\"127.0.0.1:11211\"} 5"));
  CHECK(has(page, "ithaca_server_failures_total{pool=\"main\",server=\"127.0.0.1:11211\",kind=\"timeout\"} 2"));
  CHECK(has(page, "ithaca_server_inflight{pool=\"main\",server=\"127.0.0.1:11211\"} 1"));
  CHECK(has(page, "# TYPE ithaca_server_latency_seconds histogram"));
  CHECK(has(page, "ithaca_server_latency_seconds_bucket{pool=\"main\",server=\"127.0.0.1:11211\",le=\"4.8e-05\"} 1"));
  CHECK(has(page, "ithaca_server_latency_seconds_bucket{pool=\"main\",server=\"127.0.0.1:11211\",le=\"9.6e-05\"} 3"));
  CHECK(has(page, "ithaca_server_latency_seconds_bucket{pool=\"main\",server=\"127.0.0.1:11211\",le=\"+Inf\"} 4"));
  CHECK(has(page, "ithaca_server_latency_seconds_sum{pool=\"main\",server=\"127.0.0.1:11211\"} 0.00025"));
  CHECK(has(page, "ithaca_pool_latency_seconds_count{pool=\"main\"} 4"));
}

TEST_CASE("replication and the workers' runtime") {
  page_input in;
  in.general = {{"repl_role", "master"},    {"repl_slaves", "2"},          {"repl_bytes_sent", "1000"},
                {"repl_lag_bytes", "10"},   {"repl_queue_overflows", "0"}, {"repl_ack_waits", "4"},
                {"repl_ack_timeouts", "1"}, {"repl_updated", "7"}};
  worker_runtime r;
  r.coroutines = 5;
  r.ready = 2;
  r.uring = true;
  r.uring_submissions = 11;
  r.uring_completions = 10;
  in.workers = {r, worker_runtime{}};
  const std::string page = render_page(in);
  CHECK(has(page, "ithaca_replication_role{role=\"master\"} 1"));
  CHECK(has(page, "ithaca_replication_slaves 2"));
  CHECK(has(page, "ithaca_replication_sent_bytes_total 1000"));
  CHECK(has(page, "ithaca_replication_lag_bytes 10"));
  CHECK(has(page, "ithaca_replication_ack_waits_total 4"));
  CHECK(has(page, "ithaca_replication_ack_timeouts_total 1"));
  CHECK(has(page, "ithaca_replication_applied_total{op=\"set\"} 7"));
  CHECK(has(page, "ithaca_worker_coroutines{worker=\"0\"} 5"));
  CHECK(has(page, "ithaca_worker_ready_coroutines{worker=\"0\"} 2"));
  CHECK(has(page, "ithaca_worker_uring_submissions_total{worker=\"0\"} 11"));
  CHECK(has(page, "ithaca_worker_coroutines{worker=\"1\"} 0"));
  // epoll workers have no io_uring figures.
  CHECK(page.find("ithaca_worker_uring_completions_total{worker=\"1\"}") == std::string::npos);
}

TEST_CASE("route nodes: one sample per node and counter, labelled node, kind, name and listener") {
  page_input in;
  in.routes = {{"route:0", "pool pool:a"}, {"route:0:listener", "0"},
               {"route:0:requests", "7"},  {"route:1", "failover failover"},
               {"route:1:listener", "1"},  {"route:1:requests", "5"},
               {"route:1:failovers", "3"}, {"route:2", "prefix users"},
               {"route:2:requests", "0"},  {"route:2:future_counter", "4"},
               {"route:2:bad-name", "1"},  {"route:3:requests", "9"},
               {"async_sent", "2"},        {"async_dropped", "1"},
               {"async_in_flight", "1"}};
  const std::string page = render_page(in);
  CHECK(has(page, "# TYPE ithaca_route_requests_total counter"));
  CHECK(has(page, "ithaca_route_requests_total{node=\"0\",kind=\"pool\",name=\"pool:a\",listener=\"0\"} 7"));
  // An unnamed failover's name is its kind's: the label is empty.
  CHECK(has(page, "ithaca_route_requests_total{node=\"1\",kind=\"failover\",name=\"\",listener=\"1\"} 5"));
  CHECK(has(page, "ithaca_route_failovers_total{node=\"1\",kind=\"failover\",name=\"\",listener=\"1\"} 3"));
  CHECK(has(page, "ithaca_route_requests_total{node=\"2\",kind=\"prefix\",name=\"users\"} 0"));
  // A counter the page has no entry for is shown all the same; a field that
  // cannot be part of a metric name is not.
  CHECK(has(page, "# TYPE ithaca_route_future_counter_total counter"));
  CHECK(has(page, "ithaca_route_future_counter_total{node=\"2\",kind=\"prefix\",name=\"users\"} 4"));
  CHECK(page.find("bad-name") == std::string::npos);
  // A field whose node line never came is dropped.
  CHECK(page.find("node=\"3\"") == std::string::npos);
  CHECK(has(page, "ithaca_async_sent_total 2"));
  CHECK(has(page, "ithaca_async_dropped_total 1"));
  CHECK(has(page, "# TYPE ithaca_async_in_flight gauge"));
  CHECK(has(page, "ithaca_async_in_flight 1"));
  // One HELP and TYPE per family, its samples together.
  const std::string type = "# TYPE ithaca_route_requests_total counter";
  CHECK(page.find(type) == page.rfind(type));
}

TEST_CASE("a tree of a thousand nodes renders every node once") {
  page_input in;
  for (int i = 0; i < 1000; ++i) {
    const std::string n = "route:" + std::to_string(i);
    in.routes.emplace_back(n, "pool pool:p" + std::to_string(i));
    in.routes.emplace_back(n + ":requests", std::to_string(i));
    in.routes.emplace_back(n + ":deletes_spooled", "1");
  }
  const std::string page = render_page(in);
  CHECK(has(page, "ithaca_route_requests_total{node=\"999\",kind=\"pool\",name=\"pool:p999\"} 999"));
  std::size_t samples = 0;
  for (std::size_t at = page.find("\nithaca_route_"); at != std::string::npos;
       at = page.find("\nithaca_route_", at + 1)) {
    ++samples;
  }
  CHECK(samples == 2000);
}
