// Hugging Face config.json import: alias normalisation, presets, and the errors bad files get.
#include "config/model_loader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../workload/test_models.hpp"
#include "core/error.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::config {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using workload::ModelSpec;

// The message of the InputError `fn` throws ("" if it throws none).
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

std::string write_temp(const std::string& relative, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "fmsim_model_loader" / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

// Compares everything but the name/family/source labels.
void expect_same_architecture(ModelSpec actual, ModelSpec expected) {
  actual.name = expected.name = "";
  actual.family = expected.family = "";
  actual.source = expected.source = "";
  EXPECT_TRUE(actual == expected) << "layers " << actual.num_layers << " hidden " << actual.hidden << " ffn "
                                  << actual.ffn_hidden << " heads " << actual.num_heads << "/" << actual.num_kv_heads
                                  << " head_dim " << actual.head_dim << " vocab " << actual.vocab;
}

TEST(ModelLoader, EveryPresetLoads) {
  // The issue lists 13 named presets plus the MPT and GPT sizes of training.csv; all must parse.
  const auto names = preset_model_names();
  EXPECT_GE(names.size(), 13U + 6U + 2U + 9U + 10U);
  for (const std::string& name : names) {
    const ModelSpec m = load_model(name);
    EXPECT_EQ(m.name, name);
    EXPECT_FALSE(m.source.empty()) << name << " has no _source";
    EXPECT_GT(workload::count_parameters(m).total, 0) << name;
  }
}

TEST(ModelLoader, PresetsNormaliseToTheirArchitectures) {
  // Each preset's config.json fields, normalised, equal the architecture written out by hand.
  namespace t = workload::testing;
  expect_same_architecture(load_model("llama3.1-70b"), t::llama31_70b());
  ModelSpec mixtral = t::mixtral_8x7b();
  mixtral.max_position = 32768;
  expect_same_architecture(load_model("mixtral-8x7b"), mixtral);
  ModelSpec a22b = t::qwen3_moe(94, 4096, 1536, 64, 4);
  a22b.ffn_hidden = 12288;  // intermediate_size: the dense width Qwen3-MoE would use for mlp_only_layers
  a22b.max_position = 40960;
  expect_same_architecture(load_model("qwen3-235b-a22b"), a22b);
  ModelSpec ds = t::deepseek_v3();
  ds.max_position = 163840;
  expect_same_architecture(load_model("deepseek-v3"), ds);
  // DeepSeek-R1 is post-trained from DeepSeek-V3-Base and Llama 3.3 70B reuses Llama 3.1 70B: their
  // config.json files give the same architectures (names users type for them).
  expect_same_architecture(load_model("deepseek-r1"), ds);
  expect_same_architecture(load_model("llama3.3-70b"), t::llama31_70b());
  ModelSpec oss = t::gpt_oss(36, 128);
  expect_same_architecture(load_model("gpt-oss-120b"), oss);
  expect_same_architecture(load_model("gpt3-175b"), t::gpt3_175b());
}

TEST(ModelLoader, PresetNamesAreCaseInsensitiveWithDidYouMean) {
  EXPECT_EQ(load_model("LLaMA3.1-70B").num_layers, 80);
  EXPECT_THAT(error_of([] { load_model("llama3.1-70"); }),
              AllOf(HasSubstr("--model"), HasSubstr("unknown model 'llama3.1-70'"), HasSubstr("llama3.1-70b")));
  EXPECT_THAT(error_of([] { load_model("no/such/config.json"); }), HasSubstr("no such file"));
}

TEST(ModelLoader, LoadsFileAndDirectory) {
  const std::string text = R"({"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4,
    "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000})";
  const std::string file = write_temp("tiny/config.json", text);
  const ModelSpec from_file = load_model(file);
  EXPECT_EQ(from_file.name, "tiny");  // config.json takes its directory's name
  EXPECT_EQ(from_file.hidden, 512);
  const ModelSpec from_dir = load_model(std::filesystem::path(file).parent_path().string());
  EXPECT_EQ(from_dir.num_layers, 4);
  EXPECT_EQ(from_dir.num_kv_heads, 8);  // num_key_value_heads absent: MHA
  EXPECT_EQ(from_dir.head_dim, 64);     // hidden / heads
  const std::string empty_dir = std::filesystem::path(write_temp("empty/x.txt", "")).parent_path().string();
  EXPECT_THAT(error_of([&] { load_model(empty_dir); }), HasSubstr("holds no config.json"));
}

// A number past the double range (1.8e308) is an input error naming its line, not an escaping
// nlohmann exception (found by fuzz/hf_config with '151e308').
TEST(ModelLoader, NumberPastDoubleRangeIsAnInputError) {
  const std::string message = error_of(
      [] { (void)parse_hf_config("{\"model_type\": \"llama\",\n \"hidden_size\": 151e308}", "cfg.json", "x"); });
  EXPECT_THAT(message, HasSubstr("cfg.json:2"));
  EXPECT_THAT(message, HasSubstr("number 151e308 is out of range"));
}

// Parameter counts are int64: a model whose weights pass 2^62 (hidden_size 10^9 on Llama 3.1 8B's
// other widths: about 7.4e19) is refused naming hidden_size, before any count wraps; the largest
// preset (DeepSeek-V3, 6.7e11) is seven orders of magnitude inside.
TEST(ModelLoader, WeightsPastInt64AreRefused) {
  const std::string message = error_of([] {
    (void)parse_hf_config(R"({"model_type": "llama", "hidden_size": 1000000000, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256})",
                          "big.json", "big");
  });
  EXPECT_THAT(message, HasSubstr("big.json"));
  EXPECT_THAT(message, HasSubstr("hidden_size"));
  EXPECT_THAT(message, HasSubstr("past the 2^62 (4.6e18) fmsim counts to"));
  const ModelSpec ok = parse_hf_config(R"({"model_type": "llama", "hidden_size": 1000000, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256})",
                                       "wide.json", "wide");
  EXPECT_EQ(ok.hidden, 1000000);
}

TEST(ModelLoader, Gpt2AliasesAndDefaults) {
  // GPT-2: n_embd / n_layer / n_head / n_positions; n_inner null means 4·n_embd; tied, learned positions.
  const ModelSpec m = parse_hf_config(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
    "n_inner": null, "n_positions": 1024, "vocab_size": 50257, "activation_function": "gelu_new"})",
                                      "gpt2.json", "gpt2");
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.num_layers, 12);
  EXPECT_EQ(m.ffn_hidden, 4 * 768);
  EXPECT_EQ(m.mlp, workload::MlpKind::Gelu);
  EXPECT_EQ(m.position, workload::PositionKind::Learned);
  EXPECT_EQ(m.norm, workload::NormKind::LayerNorm);
  EXPECT_TRUE(m.tied_embeddings);
  // GPT-2 small has 124,439,808 parameters (HF gpt2 safetensors total).
  EXPECT_EQ(workload::count_parameters(m).total, 124439808);
}

TEST(ModelLoader, Llama4MaverickFromItsNestedTextConfig) {
  // meta-llama/Llama-4-Maverick-17B-128E-Instruct: the language model sits under text_config;
  // intermediate_size (8192) is the expert and shared-expert width, intermediate_size_mlp (16384)
  // the dense layers'; every 2nd layer is MoE (interleave_moe_layer_step 2: layers 1, 3, ...);
  // chunked attention (8192) on all but every 4th layer.
  const ModelSpec m = load_model("llama4-maverick");
  EXPECT_EQ(m.hidden, 5120);
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.num_heads, 40);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden, 16384);
  EXPECT_EQ(m.moe.num_experts, 128);
  EXPECT_EQ(m.moe.top_k, 1);
  EXPECT_EQ(m.moe.expert_ffn, 8192);
  EXPECT_EQ(m.moe.shared_expert_ffn, 8192);
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_EQ(m.sliding_window, 8192);
  EXPECT_FALSE(m.is_sliding_layer(3));
  EXPECT_TRUE(m.is_sliding_layer(0));
  // 400B total (Meta's model card): attention 48 x 62.9M, dense MLP 24 x 251.7M, MoE 24 x
  // (128 + 1 shared) x 125.8M, embeddings and LM head 2 x 202048 x 5120.
  EXPECT_NEAR(static_cast<double>(workload::count_parameters(m).total), 400.7e9, 0.5e9);
}

TEST(ModelLoader, MptAliases) {
  // MPT: d_model / n_layers / n_heads, FFN = expansion_ratio·d_model, kv heads in attn_config.
  const ModelSpec m = parse_hf_config(R"({"model_type": "mpt", "d_model": 4096, "n_layers": 32, "n_heads": 32,
    "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50368,
    "attn_config": {"kv_n_heads": 8, "alibi": true}, "no_bias": true})",
                                      "mpt.json", "mpt");
  EXPECT_EQ(m.ffn_hidden, 16384);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.position, workload::PositionKind::Alibi);
  EXPECT_FALSE(m.attention_bias);
  EXPECT_FALSE(m.mlp_bias);
  // The shipped llm-foundry mpt-7b preset reproduces its benchmark NumParams, 6658859008.
  EXPECT_EQ(workload::count_parameters(load_model("mpt-7b")).total, 6658859008);
}

TEST(ModelLoader, MoeAliases) {
  // Qwen2-MoE: num_experts, shared_expert_intermediate_size, decoder_sparse_step 2 = layers 1, 3, ...
  const ModelSpec q = parse_hf_config(R"({"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
    "decoder_sparse_step": 2, "vocab_size": 151936})",
                                      "q.json", "q");
  EXPECT_EQ(q.moe.num_experts, 60);
  EXPECT_EQ(q.moe.top_k, 4);
  EXPECT_EQ(q.moe.expert_ffn, 1408);
  EXPECT_EQ(q.moe.shared_expert_ffn, 5632);
  EXPECT_FALSE(q.is_moe_layer(0));
  EXPECT_TRUE(q.is_moe_layer(1));
  EXPECT_FALSE(q.is_moe_layer(2));
  EXPECT_TRUE(q.is_moe_layer(3));
  EXPECT_TRUE(q.attention_bias);  // Qwen2 q/k/v projections always carry biases
  // DeepSeek: n_shared_experts·moe_intermediate_size; first_k_dense_replace; moe_topk alias.
  const ModelSpec d = parse_hf_config(R"({"model_type": "deepseek_v2", "hidden_size": 2048, "num_hidden_layers": 27,
    "num_attention_heads": 16, "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_shared_experts": 2,
    "n_routed_experts": 64, "moe_topk": 6, "first_k_dense_replace": 1, "kv_lora_rank": 512, "q_lora_rank": null,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400})",
                                      "d.json", "d");
  EXPECT_EQ(d.moe.shared_expert_ffn, 2 * 1408);
  EXPECT_EQ(d.moe.top_k, 6);
  EXPECT_EQ(d.moe.first_dense_layers, 1);
  ASSERT_TRUE(d.mla.has_value());
  EXPECT_EQ(d.mla->q_lora_rank, 0);  // null: queries not compressed
  EXPECT_EQ(d.head_dim, 192);
  // Mixtral / GPT-OSS: intermediate_size is the expert width.
  EXPECT_EQ(load_model("mixtral-8x22b").moe.expert_ffn, 16384);
  EXPECT_EQ(load_model("gpt-oss-20b").moe.expert_ffn, 2880);
}

TEST(ModelLoader, SlidingWindowLayouts) {
  // GPT-OSS layer_types alternate sliding/full: every 2nd layer is full attention.
  const ModelSpec oss = load_model("gpt-oss-20b");
  EXPECT_EQ(oss.sliding_window, 128);
  EXPECT_EQ(oss.sliding_window_pattern, 2);
  EXPECT_TRUE(oss.is_sliding_layer(0));
  EXPECT_FALSE(oss.is_sliding_layer(1));
  // Mistral 7B v0.1: sliding_window on every layer.
  const ModelSpec mistral = parse_hf_config(R"({"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
    "sliding_window": 4096})",
                                            "m.json", "m");
  for (int i = 0; i < 32; ++i) EXPECT_TRUE(mistral.is_sliding_layer(i)) << i;
  // Qwen: sliding_window is ignored unless use_sliding_window is true.
  EXPECT_EQ(
      parse_hf_config(R"({"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
    "intermediate_size": 3072, "vocab_size": 100, "sliding_window": 4096, "use_sliding_window": false})",
                      "q.json", "q")
          .sliding_window,
      0);
}

TEST(ModelLoader, UnknownModelTypeListsEveryMissingField) {
  const std::string message = error_of(
      [] { parse_hf_config(R"({"model_type": "mamba", "vocab_size": 50280})", "mamba/config.json", "mamba"); });
  EXPECT_THAT(message,
              AllOf(HasSubstr("mamba/config.json"), HasSubstr("unknown model_type 'mamba'"), HasSubstr("hidden_size"),
                    HasSubstr("num_hidden_layers"), HasSubstr("num_attention_heads"), HasSubstr("intermediate_size")));
  // An unknown type with every generic field is accepted.
  const ModelSpec m = parse_hf_config(R"({"model_type": "newarch", "hidden_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 100, "hidden_act": "gelu"})",
                                      "n.json", "n");
  EXPECT_EQ(m.mlp, workload::MlpKind::Gelu);
  EXPECT_EQ(m.family, "newarch");
}

TEST(ModelLoader, MalformedJsonNamesFileAndLine) {
  const std::string message = error_of(
      [] { parse_hf_config("{\n  \"hidden_size\": 4096,\n  \"num_hidden_layers\": ,\n}", "bad/config.json", "bad"); });
  EXPECT_THAT(message, AllOf(HasSubstr("bad/config.json:3:"), HasSubstr("malformed JSON")));
  EXPECT_THAT(error_of([] { parse_hf_config("[1, 2]", "list.json", "x"); }), HasSubstr("expected a JSON object"));
}

// A valid Llama-style config with one field replaced.
std::string llama_with(const std::string& key, const std::string& value) {
  std::string text = R"({
  "model_type": "llama",
  "hidden_size": 4096,
  "num_hidden_layers": 32,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "intermediate_size": 14336,
  "vocab_size": 128256
})";
  const std::string needle = "\"" + key + "\": ";
  const std::size_t pos = text.find(needle);
  if (pos == std::string::npos) return text;
  const std::size_t end = text.find_first_of(",\n", pos + needle.size());
  return text.substr(0, pos + needle.size()) + value + text.substr(end);
}

// GPT-OSS's config.json says what Megatron-Core runs outside its fused kernels: rope_scaling of
// rope_type "yarn" (the older key "type" too) and the activation clamp swiglu_limit; Llama 3.1's
// "llama3" scaling is not YaRN. A negative clamp is refused with the file and the key.
TEST(ModelLoader, YarnScalingAndActivationClamp) {
  // The Llama config of llama_with plus one more key.
  auto llama_plus = [](const std::string& key, const std::string& value) {
    std::string text = llama_with("", "");
    const std::string last = "\"vocab_size\": 128256";
    return text.replace(text.find(last), last.size(), last + ",\n  \"" + key + "\": " + value);
  };
  const ModelSpec oss = load_model("gpt-oss-120b");
  EXPECT_TRUE(oss.rope_yarn);
  EXPECT_DOUBLE_EQ(oss.activation_clamp, 7.0);
  EXPECT_TRUE(load_model("deepseek-v3").rope_yarn);
  EXPECT_FALSE(load_model("llama3.1-8b").rope_yarn);
  EXPECT_DOUBLE_EQ(load_model("qwen3-30b-a3b").activation_clamp, 0.0);
  EXPECT_TRUE(parse_hf_config(llama_plus("rope_scaling", R"({"type": "YaRN", "factor": 4})"), "c.json", "c").rope_yarn);
  EXPECT_THAT(error_of([&] { parse_hf_config(llama_plus("swiglu_limit", "-1"), "c.json", "c"); }),
              HasSubstr("swiglu_limit"));
  EXPECT_THAT(error_of([&] { parse_hf_config(llama_plus("rope_scaling", R"({"rope_type": 3})"), "c.json", "c"); }),
              HasSubstr("rope_scaling.rope_type"));
}

TEST(ModelLoader, InvalidValuesNameFieldAndLine) {
  EXPECT_THAT(error_of([] { parse_hf_config(llama_with("num_hidden_layers", "0"), "c.json", "c"); }),
              HasSubstr("c.json:4: num_hidden_layers: 0 must be a positive integer"));
  EXPECT_THAT(error_of([] { parse_hf_config(llama_with("num_attention_heads", "-2"), "c.json", "c"); }),
              HasSubstr("c.json:5: num_attention_heads:"));
  EXPECT_THAT(error_of([] { parse_hf_config(llama_with("num_attention_heads", "30"), "c.json", "c"); }),
              HasSubstr("30 heads do not divide hidden size 4096"));
  EXPECT_THAT(error_of([] { parse_hf_config(llama_with("num_key_value_heads", "5"), "c.json", "c"); }),
              HasSubstr("num_key_value_heads: 5 key/value heads do not divide 32 attention heads"));
  EXPECT_THAT(error_of([] { parse_hf_config(llama_with("hidden_size", "\"big\""), "c.json", "c"); }),
              HasSubstr("c.json:3: hidden_size: expected an integer"));
  EXPECT_THAT(error_of([] { parse_hf_config(llama_with("intermediate_size", "null"), "c.json", "c"); }),
              HasSubstr("missing required field intermediate_size"));
  const std::string top_k = R"({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "intermediate_size": 14336, "vocab_size": 32000,
    "num_local_experts": 8, "num_experts_per_tok": 9})";
  EXPECT_THAT(error_of([&] { parse_hf_config(top_k, "moe.json", "moe"); }),
              HasSubstr("num_experts_per_tok: 9 must be between 1 and the 8 experts"));
  const std::string no_top_k = R"({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8})";
  EXPECT_THAT(error_of([&] { parse_hf_config(no_top_k, "moe.json", "moe"); }),
              HasSubstr("missing required field num_experts_per_tok"));
}

// A whole number written as a float past int64's range (5.12e66, found by libFuzzer/UBSan as a
// float-cast-overflow in the integer reader) or an unsigned integer past 2^63-1 is an input
// error naming the field, not a cast.
TEST(ModelLoader, IntegerPastInt64IsAnInputError) {
  for (const char* value : {"5.12e66", "-1e19", "9223372036854775808.0", "18446744073709551615"}) {
    EXPECT_THAT(error_of([&] { parse_hf_config(llama_with("vocab_size", value), "c.json", "c"); }),
                HasSubstr("vocab_size: expected an integer below 2^63"))
        << value;
  }
  EXPECT_THAT(error_of([] { parse_hf_config(llama_with("vocab_size", "1.5"), "c.json", "c"); }),
              HasSubstr("vocab_size: expected an integer, got 1.5"));
}

// A layer count that is negative or past 2^20 is refused before the per-layer layout is built
// (libFuzzer: a Jamba config with "num_hidden_layers": -31 read as a size ran out of memory).
TEST(ModelLoader, LayerCountIsCheckedBeforeTheLayout) {
  const std::string jamba = R"({"model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": LAYERS,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 65536,
    "attn_layer_period": 8, "attn_layer_offset": 4, "expert_layer_period": 2, "expert_layer_offset": 1,
    "num_experts": 16, "num_experts_per_tok": 2})";
  auto with_layers = [&](const std::string& n) {
    return jamba.substr(0, jamba.find("LAYERS")) + n + jamba.substr(jamba.find("LAYERS") + 6);
  };
  EXPECT_THAT(error_of([&] { parse_hf_config(with_layers("-31"), "j.json", "j"); }),
              HasSubstr("num_hidden_layers: -31 must be a positive integer"));
  EXPECT_THAT(error_of([&] { parse_hf_config(with_layers("2000000000"), "j.json", "j"); }),
              HasSubstr("num_hidden_layers: 2000000000 layers is out of range; allowed: 1 to 1048576"));
  EXPECT_EQ(parse_hf_config(with_layers("32"), "j.json", "j").num_layers, 32);
}

// A Mamba inner width (expand x hidden_size, or mamba_num_heads x mamba_head_dim) past 2^63 is an
// input error naming the field (libFuzzer/UBSan: signed overflow of 7777777777777777728 x 2688 in
// a Nemotron-H config's "expand"), not a wrapped width.
TEST(ModelLoader, MambaWidthPastInt64IsAnInputError) {
  const std::string nemotron = R"({"model_type": "nemotron_h", "hidden_size": 2688, "num_hidden_layers": 4,
    "num_attention_heads": 32, "num_key_value_heads": 2, "intermediate_size": 1856, "vocab_size": 131072,
    "hybrid_override_pattern": "M-*-", EXTRA})";
  auto with = [&](const std::string& extra) {
    return nemotron.substr(0, nemotron.find("EXTRA")) + extra + nemotron.substr(nemotron.find("EXTRA") + 5);
  };
  EXPECT_THAT(error_of([&] { parse_hf_config(with(R"("expand": 7777777777777777728)"), "n.json", "n"); }),
              HasSubstr("expand: 7777777777777777728 x 2688 is past 2^63"));
  EXPECT_THAT(error_of([&] {
                parse_hf_config(with(R"("mamba_num_heads": 4611686018427387904, "mamba_head_dim": 64)"), "n.json", "n");
              }),
              HasSubstr("mamba_num_heads: 4611686018427387904 x 64 is past 2^63"));
  // A sane width is the product: 2 x 2688 = 5376 (Mamba-2 default expand 2).
  EXPECT_EQ(parse_hf_config(with(R"("expand": 2, "mamba_head_dim": 64, "n_groups": 4)"), "n.json", "n").ssm->inner,
            5376);
}

TEST(ModelLoader, ModelFromDimensions) {
  // training.csv row V042: Mixtral-8x7B, 32 layers, hidden 4096, 32/8 heads, vocab 32000,
  // 8 experts top-2 of width 14336 (dense FFN blank): 46.7B parameters.
  ModelDimensions d;
  d.name = "Mixtral-8x7B";
  d.num_layers = 32;
  d.hidden = 4096;
  d.num_heads = 32;
  d.num_kv_heads = 8;
  d.vocab = 32000;
  d.num_experts = 8;
  d.top_k = 2;
  d.expert_ffn = 14336;
  const ModelSpec m = model_from_dimensions(d, "training.csv");
  EXPECT_NEAR(static_cast<double>(workload::count_parameters(m).total) / 46.7e9, 1.0, 0.005);

  ModelDimensions dense = d;
  dense.num_experts = 0;
  EXPECT_THAT(error_of([&] { model_from_dimensions(dense, "training.csv"); }),
              HasSubstr("training.csv: ffn_hidden: a positive dense FFN width is required"));
  ModelDimensions bad_k = d;
  bad_k.top_k = 0;
  EXPECT_THAT(error_of([&] { model_from_dimensions(bad_k, "training.csv"); }), HasSubstr("top_k: 0 must be between 1"));
  ModelDimensions no_layers = d;
  no_layers.num_layers = 0;
  EXPECT_THAT(error_of([&] { model_from_dimensions(no_layers); }),
              HasSubstr("num_layers: 0 must be a positive integer"));
}

}  // namespace
}  // namespace fmsim::config

namespace fmsim::config {
namespace {

// Transformers' GemmaConfig/Gemma2Config default tie_word_embeddings to true and Google's
// gemma-2 config.json files leave the key out: the head is the embedding, so Gemma 2 27B has
// 27.2B parameters (46 x (attention 75.5M + FFN 509.6M + norms) + 256000 x 4608 embedding), not
// the 28.4B an untied head would give: the checkpoint holds 27,227,128,320. The model counts two
// norms per layer, not Gemma 2's four (its pre/post-FFN sandwich norms, 46 x 2 x 4608 = 0.42M),
// so it is that much short. Gemma 2 alternates sliding (even) and full (odd) layers.
TEST(ModelLoader, GemmaDefaultsToTiedEmbeddingsAndAlternatingWindows) {
  const auto m = load_model("gemma2-27b");
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(workload::count_parameters(m).total, 27227128320 - 46 * 2 * 4608);
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_TRUE(m.is_sliding_layer(0));
  EXPECT_FALSE(m.is_sliding_layer(1));
  EXPECT_TRUE(m.is_sliding_layer(44));
  EXPECT_FALSE(m.is_sliding_layer(45));
}

// Gemma 3 text models make every sliding_window_pattern-th layer full attention (default 6).
TEST(ModelLoader, GemmaThreeEverySixthLayerIsFull) {
  const std::string file = ::testing::TempDir() + "/gemma3_text_config.json";
  std::ofstream(file) << R"({"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
    "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
    "vocab_size": 262208, "sliding_window": 1024})";
  const auto m = load_model(file);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.qk_norm);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(m.is_sliding_layer(i), i % 6 != 5) << i;
}

// The popular presets count the parameters their model cards state (rounded as the cards do):
// Llama 2 6.74B / 13.0B / 69.0B, Llama 3.2 1.24B / 3.21B, Mistral 7B 7.24B, Qwen2.5 1.54B /
// 7.61B / 14.7B / 32.5B (HF lists 32.8B) / 72.7B, Gemma 2 9.24B.
TEST(ModelLoader, PopularPresetsCountTheirModelCardParameters) {
  const std::vector<std::pair<std::string, double>> cards{
      {"llama2-7b", 6.74e9},   {"llama2-13b", 13.0e9},  {"llama2-70b", 69.0e9},   {"llama3.2-1b", 1.24e9},
      {"llama3.2-3b", 3.21e9}, {"mistral-7b", 7.24e9},  {"qwen2.5-1.5b", 1.54e9}, {"qwen2.5-7b", 7.61e9},
      {"qwen2.5-14b", 14.7e9}, {"qwen2.5-32b", 32.8e9}, {"qwen2.5-72b", 72.7e9},  {"gemma2-9b", 9.24e9}};
  for (const auto& [name, card] : cards) {
    const double n = static_cast<double>(workload::count_parameters(load_model(name)).total);
    EXPECT_NEAR(n / card, 1.0, 0.006) << name << ": " << n;
  }
}

TEST(ModelLoader, PublishedNamesFindThePresetOfTheirRepo) {
  // A Hugging Face repo id, as a table or a request names the model, finds the preset whose
  // config.json came from that repo; checkpoint qualifiers (instruct, quantisation, release date,
  // Mistral's v0.N) name the same architecture.
  EXPECT_EQ(preset_for_published_name("Qwen/Qwen3-32B"), "qwen3-32b");
  EXPECT_EQ(preset_for_published_name("meta-llama/Llama-3.1-70B"), "llama3.1-70b");
  EXPECT_EQ(preset_for_published_name("nvidia/Llama-3.1-8B-Instruct-FP8"), "llama3.1-8b");
  EXPECT_EQ(preset_for_published_name("Qwen/Qwen3-235B-A22B-FP8"), "qwen3-235b-a22b");
  EXPECT_EQ(preset_for_published_name("deepseek-ai/DeepSeek-R1-0528"), "deepseek-r1");
  EXPECT_EQ(preset_for_published_name("nvidia/DeepSeek-R1-NVFP4"), "deepseek-r1");
  EXPECT_EQ(preset_for_published_name("mistralai/Mixtral-8x7B-v0.1"), "mixtral-8x7b");
  EXPECT_EQ(preset_for_published_name("Llama-3.3-70B-Instruct"), "llama3.3-70b");
  EXPECT_EQ(preset_for_published_name("moonshotai/Kimi-K2.5"), "kimi-k2.5");
  EXPECT_EQ(preset_for_published_name("MiniMaxAI/MiniMax-M2.5"), "minimax-m2.5");
  // A name with a preset of its own is not folded into a neighbour's.
  EXPECT_EQ(preset_for_published_name("deepseek-ai/DeepSeek-V3"), "deepseek-v3");
  EXPECT_EQ(preset_for_published_name("moonshotai/Kimi-K2-Instruct"), "kimi-k2");
  EXPECT_EQ(preset_for_published_name("example/Unknown-Model-7B"), "");
  // --model takes the published name too.
  EXPECT_EQ(load_model("meta-llama/Llama-3.1-8B-Instruct").name, "llama3.1-8b");
  EXPECT_THAT(error_of([] { load_model("example/Unknown-Model-7B"); }),
              HasSubstr("no preset published as 'example/Unknown-Model-7B'"));
}

TEST(ModelLoader, TableNamesFindTheirPreset) {
  // Benchmark tables spell the same names with underscores, spaces or no hyphens, and NVIDIA's
  // repos repeat the organisation: compared without hyphens, after the qualifiers are stripped.
  EXPECT_EQ(preset_for_published_name("Qwen3_30B_a3B"), "qwen3-30b-a3b");
  EXPECT_EQ(preset_for_published_name("GPT OSS 120B"), "gpt-oss-120b");
  EXPECT_EQ(preset_for_published_name("DeepSeekV3"), "deepseek-v3");
  EXPECT_EQ(preset_for_published_name("LLAMA3.1_405B"), "llama3.1-405b");
  EXPECT_EQ(preset_for_published_name("LLAMA3_70B"), "llama3.1-70b");
  EXPECT_EQ(preset_for_published_name("Kimi_K2"), "kimi-k2");
  EXPECT_EQ(preset_for_published_name("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"), "nemotron-3-nano-30b-a3b");
  EXPECT_EQ(preset_for_published_name("Nemotron-H-8B"), "nemotron-h-8b");
  // A name without its size is the one preset that continues it with a size, and no preset when
  // several do (Llama 3.1 comes in 8B, 70B and 405B).
  EXPECT_EQ(preset_for_published_name("Nemotron_3_Nano"), "nemotron-3-nano-30b-a3b");
  EXPECT_EQ(preset_for_published_name("Llama-3.1"), "");
  EXPECT_EQ(preset_for_published_name("Nemotron_3_Super"), "");
  EXPECT_EQ(preset_for_published_name(""), "");
}

TEST(ModelLoader, ConfigNestedTooDeepIsRefusedNotACrash) {
  // 100,000 nested objects would overflow the recursive parser's stack: refused before parsing.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  deep += "1";
  deep += std::string(100000, '}');
  EXPECT_THAT(error_of([&] { parse_hf_config(deep, "deep.json", "deep"); }),
              AllOf(HasSubstr("deep.json:1"), HasSubstr("nested deeper than 256 levels")));
}

}  // namespace
}  // namespace fmsim::config
