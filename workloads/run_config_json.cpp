// SPDX-License-Identifier: MIT
#include "workloads/run_config_json.hpp"

#include "src/core/errors.hpp"

namespace commprof {
namespace {

nlohmann::ordered_json compute_json(const WorkloadConfig& w) {
  const std::optional<ComputeProfile>& p = w.compute;
  if (!p) return nullptr;
  return {{"source", p->source},
          {"samples", p->samples},
          {"micro_batches", p->micro_batches},
          {"split_by_names", p->split_by_names},
          {"forward_ns", p->forward_ns},
          {"backward_ns", p->backward_ns},
          {"optimizer_ns", p->optimizer_ns},
          {"ends_ns", p->ends.total()},
          {"idle_ns", p->idle_ns},
          {"gaps_ns", p->gaps_total()},
          {"host_gaps_replayed", w.host_gaps}};
}

// A field of `j`, or ConfigError naming the source and the field.
template <class T>
T config_field(const nlohmann::ordered_json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    throw ConfigError(where + ": its run configuration has no \"" + key + "\"");
  }
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ConfigError(where + ": its run configuration's \"" + key + "\" has the wrong type (" +
                      it->dump() + ")");
  }
}

}  // namespace

nlohmann::ordered_json run_config_json(const WorkloadConfig& w, const RunSettings& r) {
  const ModelShape& s = w.shape;
  const ParallelLayout& l = w.layout;
  return {
      {"command", "run"},
      {"workload", workload_name(w.kind)},
      {"tp", l.tp},
      {"dp", l.dp},
      {"pp", l.pp},
      {"cp", l.cp},
      {"ep", l.ep},
      {"etp", l.expert_tp()},
      {"model",
       {{"name", s.name},
        {"layers", s.layers},
        {"hidden", s.hidden},
        {"heads", s.heads},
        {"kv_heads", s.key_value_heads()},
        {"ffn", s.ffn},
        {"gated_ffn", s.gated_ffn},
        {"seq", s.seq},
        {"micro_batch", s.micro_batch},
        {"micro_batches", s.micro_batches},
        {"dtype", dtype_name(s.dtype)},
        {"vocab", s.vocab},
        {"tie_embeddings", s.tie_embeddings},
        {"experts", s.experts},
        {"top_k", s.top_k},
        {"moe_ffn", s.moe_ffn},
        {"shared_experts", s.shared_experts},
        {"dense_layers", s.dense_layers},
        {"capacity_factor", s.capacity_factor}}},
      {"routing", s.moe() ? nlohmann::ordered_json(w.routing.text()) : nullptr},
      {"bucket_mb", w.bucket_mb},
      {"dp_mode", w.dp_mode == DpMode::kDdp ? "ddp" : "zero"},
      {"sequence_parallel", w.sequence_parallel},
      {"schedule", schedule_name(w.schedule)},
      {"virtual_stages", w.virtual_stages},
      {"stage_layers", virtual_stage_layers(s.layers, l.pp, w.virtual_stages, w.split)},
      {"offload", w.offload},
      {"no_overlap", w.no_overlap},
      {"slow_rank", w.slow_rank >= 0
                        ? nlohmann::ordered_json({{"rank", w.slow_rank}, {"factor", w.slow_factor}})
                        : nlohmann::ordered_json(nullptr)},
      {"attention", attention_mode_name(w.attention)},
      {"cp_mode", cp_mode_name(w.cp_mode)},
      {"steps", r.steps},
      {"warmup_steps", r.warmup_steps},
      {"op_timing", op_timing_name(r.timing)},
      {"sample_every", r.timing == OpTimingMode::kSampled ? nlohmann::ordered_json(r.sample_every)
                                                          : nlohmann::ordered_json(nullptr)},
      {"compute_from", compute_json(w)},
      {"link_probe", r.link_probe ? nlohmann::ordered_json::parse(link_model_text(*r.link_probe))
                                  : nlohmann::ordered_json(nullptr)}};
}

RunConfigRead run_config_from_json(const nlohmann::ordered_json& j, const std::string& where) {
  if (!j.is_object() || j.empty()) {
    throw ConfigError(where +
                      ": its header holds no run configuration (a `commprof run` "
                      "writes one; imports and plugin captures do not)");
  }
  const auto command = config_field<std::string>(j, "command", where);
  if (command != "run") {
    throw ConfigError(where + ": its configuration is of `commprof " + command +
                      "`, not of `commprof run`");
  }
  RunConfigRead out;
  WorkloadConfig& w = out.workload;
  try {
    w.kind = parse_workload(config_field<std::string>(j, "workload", where));
    ParallelLayout& l = w.layout;
    l.tp = config_field<int>(j, "tp", where);
    l.dp = config_field<int>(j, "dp", where);
    l.pp = config_field<int>(j, "pp", where);
    l.cp = config_field<int>(j, "cp", where);
    l.ep = config_field<int>(j, "ep", where);
    const int etp = config_field<int>(j, "etp", where);
    l.etp = etp == l.tp ? 0 : etp;
    const auto model = j.find("model");
    if (model == j.end() || !model->is_object()) {
      throw ConfigError(where + ": its run configuration has no \"model\" object");
    }
    const nlohmann::ordered_json& m = *model;
    ModelShape& s = w.shape;
    s.name = config_field<std::string>(m, "name", where);
    s.layers = config_field<int>(m, "layers", where);
    s.hidden = config_field<int>(m, "hidden", where);
    s.heads = config_field<int>(m, "heads", where);
    s.kv_heads = config_field<int>(m, "kv_heads", where);
    if (s.kv_heads == s.heads) s.kv_heads = 0;
    s.ffn = config_field<int>(m, "ffn", where);
    s.gated_ffn = config_field<bool>(m, "gated_ffn", where);
    s.seq = config_field<int>(m, "seq", where);
    s.micro_batch = config_field<int>(m, "micro_batch", where);
    s.micro_batches = config_field<int>(m, "micro_batches", where);
    s.dtype = parse_dtype(config_field<std::string>(m, "dtype", where));
    s.vocab = config_field<int>(m, "vocab", where);
    s.tie_embeddings = config_field<bool>(m, "tie_embeddings", where);
    s.experts = config_field<int>(m, "experts", where);
    s.top_k = config_field<int>(m, "top_k", where);
    s.moe_ffn = config_field<int>(m, "moe_ffn", where);
    s.shared_experts = config_field<int>(m, "shared_experts", where);
    s.dense_layers = config_field<int>(m, "dense_layers", where);
    s.capacity_factor = config_field<double>(m, "capacity_factor", where);
    validate_shape(s);
    if (s.moe()) w.routing = parse_routing(config_field<std::string>(j, "routing", where));
    w.bucket_mb = config_field<double>(j, "bucket_mb", where);
    w.dp_mode = parse_dp_mode(config_field<std::string>(j, "dp_mode", where));
    w.sequence_parallel = config_field<bool>(j, "sequence_parallel", where);
    w.schedule = parse_schedule(config_field<std::string>(j, "schedule", where));
    w.virtual_stages = config_field<int>(j, "virtual_stages", where);
    w.offload = config_field<bool>(j, "offload", where);
    w.no_overlap = config_field<bool>(j, "no_overlap", where);
    if (const auto slow = j.find("slow_rank"); slow != j.end() && slow->is_object()) {
      w.slow_rank = config_field<int>(*slow, "rank", where);
      w.slow_factor = config_field<double>(*slow, "factor", where);
    }
    w.attention = parse_attention_mode(config_field<std::string>(j, "attention", where));
    // Runs before the field was written used the default, p2p.
    if (j.contains("cp_mode"))
      w.cp_mode = parse_cp_mode(config_field<std::string>(j, "cp_mode", where));
    out.settings.steps = config_field<int>(j, "steps", where);
    out.settings.warmup_steps = config_field<int>(j, "warmup_steps", where);
    out.settings.timing = parse_op_timing(config_field<std::string>(j, "op_timing", where));
    if (const auto e = j.find("sample_every"); e != j.end() && e->is_number_integer()) {
      out.settings.sample_every = e->get<int>();
    }
    // Runs before the probe (or with --no-link-probe, or on one rank) have none.
    if (const auto probe = j.find("link_probe"); probe != j.end() && !probe->is_null()) {
      out.settings.link_probe = parse_link_model(probe->dump(), where + "'s link probe");
    }
    const auto compute = j.find("compute_from");
    out.compute_from = compute != j.end() && !compute->is_null();
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    if (what.rfind(where, 0) == 0) throw;
    throw ConfigError(where + ": its run configuration: " + what);
  }
  return out;
}

}  // namespace commprof
