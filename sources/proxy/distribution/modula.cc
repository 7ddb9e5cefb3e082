// twemproxy's modula (nc_modula.c): hash % total_weight picks a slot, each
// server owning `weight` consecutive slots in list order.
#include "distribution/kinds.h"
#include "distribution/weight_slots.h"

namespace ithaca::proxy::detail {

namespace {

class modula_distribution final : public distribution {
 public:
  modula_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::Modula, hash, static_cast<std::uint32_t>(servers.size())), slots_(servers) {}

  std::uint32_t pick(std::string_view, std::uint32_t hash) const override {
    return slots_.server_of(hash % slots_.total());
  }

 private:
  weight_slots slots_;
};

}  // namespace

std::unique_ptr<distribution> make_modula(std::span<const server_spec> servers, hash_kind hash) {
  return std::make_unique<modula_distribution>(servers, hash);
}

}  // namespace ithaca::proxy::detail
