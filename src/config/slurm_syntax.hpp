// The syntax Slurm's files share: Key=Value lines (slurm.conf, topology.conf, scontrol's
// reservation lines) with comments and line continuations, host lists and Slurm durations.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fmsim::config {

/// One logical line: Key=Value pairs (values may be quoted), with its first physical line number.
struct SlurmConfLine {
  int line = 0;
  std::vector<std::pair<std::string, std::string>> pairs;
};

/// Splits text into logical lines: '#' starts a comment, a trailing '\' continues the line, blank
/// lines are skipped. Errors (core::InputError) name `path`:line and the token.
std::vector<SlurmConfLine> split_slurm_conf(const std::string& text, const std::string& path);

/// Slurm durations: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", "UNLIMITED"/"INFINITE"
/// (returns 0). Plain numbers are minutes. Negative when malformed.
double parse_slurm_duration(const std::string& text);

/// Expands a host list ("n[1-3,5],gpu[01-02]") into names; a malformed range, a bound of more
/// than 9 digits or more than a million names is core::InputError naming `path`:`line` and `field`.
std::vector<std::string> expand_hostlist(const std::string& text, const std::string& path, int line,
                                         const std::string& field);

/// `text` in lower case (Slurm's keys are case-insensitive).
std::string lower_case(std::string text);

/// The value of `key` on `path`:`line` as a Slurm duration in seconds, or core::InputError.
double slurm_duration_value(const std::string& path, int line, const std::string& key, const std::string& value);
/// The value as a finite number of at least `lo`, or core::InputError.
double slurm_number_value(const std::string& path, int line, const std::string& key, const std::string& value,
                          double lo);
/// YES or NO (any case), or core::InputError.
bool slurm_yes_no(const std::string& path, int line, const std::string& key, const std::string& value);

}  // namespace fmsim::config
