// The hardware catalog: every known GPU, system, fabric and storage service, by name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hardware/specs.hpp"

namespace fmsim::hardware {

/// A set of specs looked up by name or alias (case-insensitive). Filled by config::load_catalog
/// from the shipped YAML files and any user overrides; an entry with an existing name replaces it.
class Catalog {
 public:
  void add(GpuSpec gpu);
  void add(SystemSpec system);
  void add(FabricSpec fabric);
  void add(StorageSpec storage);

  /// nullptr when unknown.
  [[nodiscard]] const GpuSpec* find_gpu(std::string_view name) const;
  [[nodiscard]] const SystemSpec* find_system(std::string_view name) const;
  [[nodiscard]] const FabricSpec* find_fabric(std::string_view name) const;
  [[nodiscard]] const StorageSpec* find_storage(std::string_view name) const;

  [[nodiscard]] const std::vector<GpuSpec>& gpus() const { return gpus_; }
  [[nodiscard]] const std::vector<SystemSpec>& systems() const { return systems_; }
  [[nodiscard]] const std::vector<FabricSpec>& fabrics() const { return fabrics_; }
  [[nodiscard]] const std::vector<StorageSpec>& storage() const { return storage_; }

  /// Names (not aliases) for "did you mean" messages.
  [[nodiscard]] std::vector<std::string> gpu_names() const;
  [[nodiscard]] std::vector<std::string> system_names() const;
  [[nodiscard]] std::vector<std::string> fabric_names() const;
  [[nodiscard]] std::vector<std::string> storage_names() const;

 private:
  std::vector<GpuSpec> gpus_;
  std::vector<SystemSpec> systems_;
  std::vector<FabricSpec> fabrics_;
  std::vector<StorageSpec> storage_;
};

}  // namespace fmsim::hardware
