// slurmdbd's association tree as `sacctmgr dump <cluster> file=...` writes it (the file `sacctmgr
// load` takes), read into the fair-share tree of the cluster twin.
#pragma once

#include <string>

#include "orchestration/fair_share.hpp"

namespace fmsim::config {

/// Reads `sacctmgr dump` output: lines `Cluster - 'name':...`, `Parent - 'account'` (the parent of
/// the lines that follow), `Account - 'name':Fairshare=N`, `User - 'name':Fairshare=N`; '#'
/// comments. Errors (core::InputError) name `path`:line and the field.
orchestration::FairShareTree parse_sacctmgr_dump(const std::string& text, const std::string& path);

}  // namespace fmsim::config
