// fmsim rl and fmsim validate rl, run as a user would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>
#include <map>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.hpp"

namespace fmsim::testing {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kRlJob{"rl",        "--policy", "qwen3-8b",  "--cluster", "p5.48xlarge:2",
                                      "--prompts", "128",      "--samples", "8",         "--max-response",
                                      "8k"};

// The text report names every phase of a colocated GRPO step and the step time.
TEST(RlCli, PrintsPhasesAndStepTime) {
  const auto r = run_fmsim(kRlJob);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"rollout", "old_log_prob", "reference", "policy_update", "weight_sync", "offload_reload",
                        "step time", "tokens/s", "GPU utilisation"}) {
    EXPECT_THAT(r.out, HasSubstr(s));
  }
}

// --json: the exposed phase times add up to the step (the phases are the step's critical path).
TEST(RlCli, JsonPhasesSumToTheStep) {
  for (const auto& extra : std::vector<std::vector<std::string>>{
           {}, {"--placement", "disaggregated", "--sync", "off-policy"}, {"--algorithm", "ppo"}}) {
    const auto r = run_fmsim(with(with(kRlJob, extra), {"--json"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    double sum = 0.0;
    for (const auto& p : j["phases"]) sum += p["exposed_s"].get<double>();
    EXPECT_NEAR(sum, j["step_time_s"].get<double>(), 1e-6 * sum);
    EXPECT_EQ(j["responses"], 1024);
  }
}

// Colocated vs separate pools flips with scale (validation/README.md, "Relative results"). On one
// 8-GPU node, TRL's colocate mode (both resident, no offload) against its server mode (1 vLLM GPU,
// 7 trainers, sequential): colocated wins, more so at larger batches, as the TRL blog reports
// (up to 1.35x for 7B, server throughput normalised by 8/7; validation/rl.csv R167). At 128 GPUs
// verl's separate pools beat colocated sync (R005/R006: 2.37x measured), checked by validate rl.
TEST(RlCli, ColocatedBeatsServerModeOnOneNode) {
  const std::vector<std::string> trl{"rl",
                                     "--policy",
                                     "qwen2.5-math-7b",
                                     "--cluster",
                                     "p5.48xlarge:1",
                                     "--samples",
                                     "8",
                                     "--prompt-len",
                                     "512",
                                     "--max-response",
                                     "256",
                                     "--response-lengths",
                                     "lognormal:mean=200,sigma=0.5",
                                     "--sharding",
                                     "zero3",
                                     "--stack",
                                     "torchtitan",
                                     "--json"};
  auto step = [&](const std::string& prompts, const std::vector<std::string>& placement) {
    const auto r = run_fmsim(with(with(trl, {"--prompts", prompts}), placement));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["step_time_s"].get<double>();
  };
  double previous = 0.0;
  for (const std::string prompts : {"64", "256"}) {
    const double colocated = step(prompts, {"--placement", "colocated", "--offload", "when-needed"});
    const double server = step(prompts, {"--placement", "disaggregated", "--generator-gpus", "1"});
    const double speedup = server / colocated * 7.0 / 8.0;  // colocated over server x 8/7, in throughput
    EXPECT_GT(speedup, previous) << prompts;
    previous = speedup;
  }
  EXPECT_GT(previous, 1.0);
  EXPECT_LT(previous, 1.35 * 1.25);
}

// --trace writes a Chrome/Perfetto trace with the phases and the generator's batches.
TEST(RlCli, TraceHasPhasesAndBatches) {
  std::string templ = (std::filesystem::temp_directory_path() / "fmsim_rl_trace_XXXXXX").string();
  const std::string dir = mkdtemp(templ.data());
  const std::string file = dir + "/rl.json";
  const auto r = run_fmsim(with(kRlJob, {"--trace", file}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  bool rollout = false, batch = false;
  for (const auto& e : j["traceEvents"]) {
    if (!e.contains("name")) continue;
    const auto name = e["name"].get<std::string>();
    rollout |= name == "rollout";
    batch |= name.rfind("batch ", 0) == 0;
  }
  EXPECT_TRUE(rollout);
  EXPECT_TRUE(batch);
  std::filesystem::remove_all(dir);
}

// Bad input: exit status 2 and a message naming the flag and what is allowed.
TEST(RlCli, BadFlagsNameTheFlag) {
  auto r = run_fmsim(with(kRlJob, {"--placement", "shared"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--placement"), HasSubstr("disaggregated")));
  r = run_fmsim(with(kRlJob, {"--response-lengths", "lognormal:mean=9k"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--response-lengths"));
  r = run_fmsim(with(kRlJob, {"--sync", "off-policy"}));  // colocated pools cannot overlap
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--placement"), HasSubstr("disaggregated")));
  r = run_fmsim(with(kRlJob, {"--tp", "3"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--tp"));
  r = run_fmsim(with(kRlJob, {"--trainer-offload", "everything"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--trainer-offload"), HasSubstr("params+optimizer")));
  r = run_fmsim(with(kRlJob, {"--gen-memory", "1.5"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--gen-memory"));
}

// --reference no drops the KL reference forward (verl use_kl_loss=False, kl_coef 0): the GRPO step
// loses exactly its reference phase; --reference yes adds one to DAPO, whose default has none.
TEST(RlCli, ReferencePassIsOptional) {
  auto phase = [](const nlohmann::json& j, const std::string& name) {
    for (const auto& p : j["phases"])
      if (p["name"] == name) return p["exposed_s"].get<double>();
    return -1.0;
  };
  const auto with_ref = run_fmsim(with(kRlJob, {"--json"}));
  const auto without = run_fmsim(with(kRlJob, {"--json", "--reference", "no"}));
  ASSERT_EQ(with_ref.exit_code, 0) << with_ref.err;
  ASSERT_EQ(without.exit_code, 0) << without.err;
  const auto a = nlohmann::json::parse(with_ref.out), b = nlohmann::json::parse(without.out);
  const double ref = phase(a, "reference");
  ASSERT_GT(ref, 0.0);
  EXPECT_LE(phase(b, "reference"), 0.0);
  EXPECT_NEAR(a["step_time_s"].get<double>() - b["step_time_s"].get<double>(), ref, 1e-6 * ref);
  const auto dapo = run_fmsim(with(kRlJob, {"--json", "--algorithm", "dapo", "--reference", "yes"}));
  ASSERT_EQ(dapo.exit_code, 0) << dapo.err;
  EXPECT_GT(phase(nlohmann::json::parse(dapo.out), "reference"), 0.0);
}

// --gen-ep spreads a MoE policy's experts over a generator replica's GPUs; it must divide the
// generation TP and the experts, and a dense policy has none to spread: each refusal names the flag.
TEST(RlCli, GenerationExpertParallelism) {
  const std::vector<std::string> moe{"rl",        "--model", "qwen3-30b-a3b", "--cluster", "p5en.48xlarge:2",
                                     "--prompts", "64",      "--gen-tp",      "8"};
  const auto ok = run_fmsim(with(moe, {"--gen-ep", "8", "--json"}));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  for (const auto& [flags, word] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{{{"--gen-ep", "3"}, "divide"},
                                                                     {{"--gen-ep", "16"}, "must divide --gen-tp 8"},
                                                                     {{"--gen-ep", "0"}, "--gen-ep"}}) {
    const auto r = run_fmsim(with(moe, flags));
    EXPECT_EQ(r.exit_code, 2) << flags[1];
    EXPECT_THAT(r.err, AllOf(HasSubstr("--gen-ep"), HasSubstr(word))) << flags[1];
  }
  const auto dense = run_fmsim(with(kRlJob, {"--gen-tp", "2", "--gen-ep", "2"}));
  EXPECT_EQ(dense.exit_code, 2);
  EXPECT_THAT(dense.err, AllOf(HasSubstr("--gen-ep"), HasSubstr("dense")));
}

// --trainer-offload adds a trainer_offload phase on the critical path (verl's param and optimizer
// offload), and the colocated switch then moves only the engine's weights; --gen-memory gives the
// engine more KV cache, hence more sequences at once.
TEST(RlCli, TrainerOffloadAndEngineMemory) {
  auto phases = [](const nlohmann::json& j) {
    std::map<std::string, double> m;
    for (const auto& p : j["phases"]) m[p["name"].get<std::string>()] = p["time_s"].get<double>();
    return m;
  };
  const auto base = run_fmsim(with(kRlJob, {"--json"}));
  const auto off = run_fmsim(with(kRlJob, {"--json", "--trainer-offload", "params+optimizer", "--gen-memory", "0.8"}));
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const auto b = nlohmann::json::parse(base.out), o = nlohmann::json::parse(off.out);
  EXPECT_EQ(phases(b).count("trainer_offload"), 0u);
  EXPECT_GT(phases(o)["trainer_offload"], 0.0);
  EXPECT_LT(phases(o)["offload_reload"], phases(b)["offload_reload"]);
  EXPECT_GT(o["rollout_concurrency"].get<int>(), b["rollout_concurrency"].get<int>());
}

// --plan ranks feasible candidates by step time.
TEST(RlCli, PlanRanksByStepTime) {
  const auto r = run_fmsim(with(kRlJob, {"--plan", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["candidates"].size(), 2u);
  double last = 0.0;
  for (const auto& c : j["candidates"]) {
    EXPECT_GE(c["step_time_s"].get<double>(), last);
    last = c["step_time_s"].get<double>();
  }
}

// `fmsim plan --rl ...` is `fmsim rl --plan ...` (issue 15 names both): the same search, the same
// candidates, and `fmsim plan --help` names the switch.
TEST(RlCli, PlanRlIsTheRlPlacementSearch) {
  std::vector<std::string> plan_rl{"plan", "--rl"};
  plan_rl.insert(plan_rl.end(), kRlJob.begin() + 1, kRlJob.end());
  const auto a = run_fmsim(with(plan_rl, {"--sync", "off-policy", "--json"}));
  const auto b = run_fmsim(with(kRlJob, {"--plan", "--sync", "off-policy", "--json"}));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ja.erase("search_ms");  // the wall time of each search
  jb.erase("search_ms");
  EXPECT_EQ(ja, jb);
  EXPECT_GE(ja["candidates"].size(), 1u);
  const auto help = run_fmsim({"plan", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--rl"));
  const auto rl_help = run_fmsim({"plan", "--rl", "--help"});
  EXPECT_EQ(rl_help.exit_code, 0);
  EXPECT_THAT(rl_help.out, HasSubstr("--staleness-fraction"));
  // Out-of-range schedule options name their flag, exit status 2.
  for (const auto& bad_flag : std::vector<std::vector<std::string>>{{"--staleness-fraction", "-1"}, {"--refill"}}) {
    const auto bad = run_fmsim(with(kRlJob, bad_flag));
    EXPECT_EQ(bad.exit_code, 2) << bad_flag[0];
    EXPECT_THAT(bad.err, HasSubstr(bad_flag[0]));
  }
  // An option of the training planner is not one of fmsim rl's: a clear error, exit status 2.
  const auto bad = run_fmsim({"plan", "--rl", "--gbs", "512"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--gbs"));
}

// Test-time compute: self-consistency with n samples generates n x the tokens of one answer
// (same length law); best-of-n adds a verifier pass over the same samples, so it costs more.
TEST(RlCli, TestTimeComputeScalesWithSamples) {
  const std::vector<std::string> base{
      "rl", "--policy",       "qwen3-8b", "--cluster",          "p5.48xlarge:1",     "--prompts",
      "32", "--max-response", "8k",       "--response-lengths", "lognormal:mean=2k", "--json"};
  auto value = [&](const std::vector<std::string>& more, const char* key) {
    const auto r = run_fmsim(with(base, more));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)[key].get<double>();
  };
  const double one = value({"--test-time", "single"}, "tokens_per_query");
  EXPECT_NEAR(one, 2048.0, 0.03 * 2048.0);
  EXPECT_NEAR(value({"--test-time", "self-consistency", "--samples", "8"}, "tokens_per_query"), 8.0 * one,
              0.02 * 8.0 * one);
  EXPECT_GT(value({"--test-time", "best-of-n", "--samples", "8"}, "gpu_seconds_per_query"),
            value({"--test-time", "self-consistency", "--samples", "8"}, "gpu_seconds_per_query"));
  const auto bad = run_fmsim(with(base, {"--test-time", "majority"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--test-time"));
}

// examples/grpo_qwen3_32b_rl.yaml holds the flags of the example; the same step comes out
// of the file and of the flags, and a flag on the command line wins over the file.
TEST(RlCli, JobFileEqualsFlags) {
  const auto file = run_fmsim({"rl", "--job", source_path("examples/grpo_qwen3_32b_rl.yaml"), "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const auto flags = run_fmsim({"rl",
                                "--policy",
                                "qwen3-32b",
                                "--cluster",
                                "p5en.48xlarge:16",
                                "--algorithm",
                                "grpo",
                                "--prompts",
                                "512",
                                "--samples",
                                "8",
                                "--max-response",
                                "16k",
                                "--response-lengths",
                                "lognormal:mean=6k,sigma=0.8",
                                "--placement",
                                "colocated",
                                "--tp",
                                "8",
                                "--steps",
                                "200",
                                "--json"});
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  EXPECT_EQ(nlohmann::json::parse(file.out)["step_time_s"], nlohmann::json::parse(flags.out)["step_time_s"]);
  EXPECT_EQ(nlohmann::json::parse(file.out)["steps"], 200);
  const auto over =
      run_fmsim({"rl", "--job", source_path("examples/grpo_qwen3_32b_rl.yaml"), "--prompts", "64", "--json"});
  ASSERT_EQ(over.exit_code, 0) << over.err;
  EXPECT_EQ(nlohmann::json::parse(over.out)["responses"], 64 * 8);
}

TEST(RlCli, JobFileUnknownKeyNamesFileAndLine) {
  std::string templ = (std::filesystem::temp_directory_path() / "fmsim_rl_job_XXXXXX").string();
  const std::string dir = mkdtemp(templ.data());
  const std::string file = dir + "/job.yaml";
  std::ofstream(file) << "policy: qwen3-8b\nprompt: 5\n";
  const auto r = run_fmsim({"rl", "--job", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("job.yaml:2"), HasSubstr("prompt")));
  std::filesystem::remove_all(dir);
}

// Agentic RL (docs/models/rl.md "Agentic rollouts"): examples/agentic_retool_rl.yaml equals its
// flags; its episodes take about --turns turns and one tool call fewer; the trained tokens hold
// the observations besides the generated tokens; slower tools, a one-call sandbox and per-turn
// training each lengthen the step; a bad value names its flag.
TEST(RlCli, AgenticEpisodes) {
  const auto json_of = [](const std::vector<std::string>& extra) {
    auto args = with({"rl", "--job", source_path("examples/agentic_retool_rl.yaml"), "--json"}, extra);
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto base = json_of({});
  const auto flags = run_fmsim({"rl",
                                "--policy",
                                "qwen2.5-7b",
                                "--cluster",
                                "hgx-h20:4",
                                "--algorithm",
                                "dapo",
                                "--prompts",
                                "64",
                                "--samples",
                                "16",
                                "--prompt-len",
                                "256",
                                "--max-response",
                                "16k",
                                "--response-lengths",
                                "lognormal:mean=4160,sigma=0.8",
                                "--gen-tp",
                                "4",
                                "--gen-memory",
                                "0.9",
                                "--stack",
                                "torchtitan",
                                "--sharding",
                                "zero3",
                                "--recompute",
                                "full",
                                "--trainer-offload",
                                "params+optimizer",
                                "--mini-batches",
                                "4",
                                "--turns",
                                "3.9",
                                "--turn-cap",
                                "16",
                                "--tool-time",
                                "0.55s",
                                "--observation-tokens",
                                "64",
                                "--json"});
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  EXPECT_EQ(base["step_time_s"], nlohmann::json::parse(flags.out)["step_time_s"]);
  const auto& a = base["agent"];
  EXPECT_NEAR(a["turns"].get<double>(), 3.9, 0.3);
  EXPECT_DOUBLE_EQ(a["tool_calls"].get<double>(), a["turns"].get<double>() - 1.0);
  EXPECT_DOUBLE_EQ(a["observation_tokens"].get<double>(), 64.0 * a["tool_calls"].get<double>());
  // Trajectory training: one sequence per episode of prompt + generated + observations.
  EXPECT_EQ(a["trained_sequences"].get<double>(), 1024.0);
  EXPECT_NEAR(a["trained_sequence_tokens"].get<double>(),
              256.0 + base["mean_response_tokens"].get<double>() + a["observation_tokens"].get<double>(), 1.0);
  EXPECT_GT(base["trained_tokens"].get<double>(), base["generated_tokens"].get<double>());
  const auto rollout = [](const nlohmann::json& j) {
    for (const auto& p : j["phases"])
      if (p["name"] == "rollout") return p["time_s"].get<double>();
    return 0.0;
  };
  EXPECT_GT(rollout(json_of({"--tool-time", "30s"})), rollout(base));
  // One sandbox slot for the pool: the 1,024 episodes' calls in series, 128 per replica at 8x the latency.
  const auto serial = json_of({"--tool-concurrency", "1"});
  EXPECT_GT(rollout(serial), 1024 * a["tool_calls"].get<double>() * 0.55 * 0.9);
  EXPECT_GT(json_of({"--trained-tokens", "per-turn"})["trained_tokens"].get<double>(),
            base["trained_tokens"].get<double>());
  // A single-turn job has no agent block.
  EXPECT_FALSE(nlohmann::json::parse(run_fmsim(with(kRlJob, {"--json"})).out).contains("agent"));
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--turns", "0.5"},
                                                        {"--tool-time", "lognormal:mean=2s,sigma=9"},
                                                        {"--tool-time", "gamma:2s"},
                                                        {"--trained-tokens", "all"},
                                                        {"--max-agents", "-1"}}) {
    const auto r = run_fmsim(with(kRlJob, {flag, value}));
    EXPECT_EQ(r.exit_code, 2) << flag << " " << value;
    EXPECT_THAT(r.err, HasSubstr(flag));
  }
  const auto capped = run_fmsim(with(kRlJob, {"--turns", "20", "--turn-cap", "16"}));
  EXPECT_EQ(capped.exit_code, 2);
  EXPECT_THAT(capped.err, AllOf(HasSubstr("--turns"), HasSubstr("--turn-cap")));
  const auto words = run_fmsim(with(kRlJob, {"--trained-tokens", "all"}));
  EXPECT_THAT(words.err, AllOf(HasSubstr("trajectory"), HasSubstr("per-turn")));
}

}  // namespace
}  // namespace fmsim::testing
