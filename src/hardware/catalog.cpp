// Name and alias lookup over the catalog's specs.
#include "hardware/catalog.hpp"

#include <algorithm>

#include "core/strings.hpp"

namespace fmsim::hardware {
namespace {

bool matches(std::string_view query, const std::string& name, const std::vector<std::string>& aliases) {
  const std::string q = core::to_lower(query);
  if (core::to_lower(name) == q) return true;
  return std::any_of(aliases.begin(), aliases.end(), [&](const std::string& a) { return core::to_lower(a) == q; });
}

template <class Spec>
void upsert(std::vector<Spec>& specs, Spec spec) {
  for (auto& s : specs) {
    if (core::to_lower(s.name) == core::to_lower(spec.name)) {
      s = std::move(spec);
      return;
    }
  }
  specs.push_back(std::move(spec));
}

template <class Spec>
const Spec* find_in(const std::vector<Spec>& specs, std::string_view name) {
  for (const auto& s : specs) {
    if (core::to_lower(s.name) == core::to_lower(name)) return &s;
  }
  for (const auto& s : specs) {
    if constexpr (requires { s.aliases; }) {
      if (matches(name, s.name, s.aliases)) return &s;
    }
  }
  return nullptr;
}

template <class Spec>
std::vector<std::string> names_of(const std::vector<Spec>& specs) {
  std::vector<std::string> out;
  out.reserve(specs.size());
  for (const auto& s : specs) out.push_back(s.name);
  return out;
}

}  // namespace

void Catalog::add(GpuSpec gpu) { upsert(gpus_, std::move(gpu)); }
void Catalog::add(SystemSpec system) { upsert(systems_, std::move(system)); }
void Catalog::add(FabricSpec fabric) { upsert(fabrics_, std::move(fabric)); }
void Catalog::add(StorageSpec storage) { upsert(storage_, std::move(storage)); }

const GpuSpec* Catalog::find_gpu(std::string_view name) const { return find_in(gpus_, name); }
const SystemSpec* Catalog::find_system(std::string_view name) const { return find_in(systems_, name); }
const FabricSpec* Catalog::find_fabric(std::string_view name) const { return find_in(fabrics_, name); }
const StorageSpec* Catalog::find_storage(std::string_view name) const { return find_in(storage_, name); }

std::vector<std::string> Catalog::gpu_names() const { return names_of(gpus_); }
std::vector<std::string> Catalog::system_names() const { return names_of(systems_); }
std::vector<std::string> Catalog::fabric_names() const { return names_of(fabrics_); }
std::vector<std::string> Catalog::storage_names() const { return names_of(storage_); }

}  // namespace fmsim::hardware
