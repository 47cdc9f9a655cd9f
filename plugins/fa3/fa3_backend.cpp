// FlashAttention-3's forward (Hopper), from the op library of the `fa3-fwd` wheel (ops
// fa3_fwd::*) or of `tokenspeed-fa3` (flash_attn_3::*, with fp16). Nothing of FA3 is needed to
// build: the library is dlopen'ed when the first CUDA point asks, its static initialisers register
// the ops with PyTorch's dispatcher, and forward() calls the op boxed, as torch.ops does from
// Python.
#include "fa3_library.hpp"

#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <string>
#include <tuple>

namespace {

using attnbench::DType;
using attnbench::Problem;
using attnbench::Support;

class Fa3Backend final : public attnbench::Backend {
 public:
  std::string name() const override { return "fa3"; }
  std::string description() const override {
    return "FlashAttention-3 forward (Hopper, sm_90) from the fa3-fwd and/or tokenspeed-fa3 "
           "wheels, loaded at run time; bf16 and fp8_e4m3, head_dim <= 256, causal bottom-right, "
           "GQA, decode, varlen; softcap (fa3-fwd), paged KV, window and fp16 (tokenspeed-fa3); "
           "MLA prefill (192 / 128) and the absorbed decode through qv (fa3-fwd)";
  }
  std::vector<std::string> kinds() const override { return {"attention", "mla"}; }

  Support supports(const Problem& p) const override {
    if (auto cuda = attnbench::sdpa::needs_cuda(p, "FlashAttention-3"); !cuda.supported)
      return cuda;
    if (p.direction == attnbench::Direction::bwd)
      return Support::no("the FA3 wheels are built forward-only (FLASHATTENTION_DISABLE_BACKWARD)");
    if (p.dtype == DType::f32) return Support::no("FlashAttention-3 has no fp32 kernels");
    if (p.v_in_k && p.dtype == DType::fp8_e4m3)
      return Support::no("this plugin runs FA3's qv path (the absorbed MLA decode) in bf16 only");
    if (p.v_in_k && (p.mla.qk_rope_head_dim != 64 || p.mla.kv_lora_rank != 512))
      return Support::no(
          "FA3's qv path is built for rope 64 and a latent rank of 512 "
          "(HDIMDIFF64), not " +
          std::to_string(p.mla.qk_rope_head_dim) + " and " + std::to_string(p.mla.kv_lora_rank));
    if (!p.v_in_k && (p.head_dim > 256 || p.head_dim % 8 != 0))
      return Support::no("FlashAttention-3 needs head_dim <= 256 and a multiple of 8, not " +
                         std::to_string(p.head_dim));
    if (!p.v_in_k && p.v_dim() != p.head_dim && !(p.head_dim == 192 && p.v_dim() == 128))
      return Support::no(
          "FlashAttention-3 builds q·k and v of different widths for 192 / 128 "
          "only (HDIMDIFF192), not " +
          std::to_string(p.head_dim) + " / " + std::to_string(p.v_dim()));
    const attnbench::fa3::Library* lib = nullptr;
    std::string why;
    pick(p, lib, why);
    return lib ? Support::yes() : Support::no(why);
  }

  at::Tensor forward(const attnbench::Inputs& in) override {
    const Problem& p = in.problem;
    const attnbench::fa3::Library* lib = nullptr;
    std::string why;
    if (!pick(p, lib, why)) throw attnbench::Unsupported(why);
    std::map<std::string, c10::IValue> args = {
        {"softmax_scale", in.scale},
        {"is_causal", p.causal},  // FA3's causal mask is bottom-right
    };
    if (p.windowed()) {
      args["window_size_left"] = p.window_left;
      args["window_size_right"] = p.right_edge();
    }
    if (p.softcap > 0) args["softcap"] = p.softcap;
    if (in.q.scalar_type() == at::kFloat8_e4m3fn) {  // bf16 out
      args["q_descale"] = descale(in.q_scale, p);
      args["k_descale"] = descale(in.k_scale, p);
      args["v_descale"] = descale(in.v_scale, p);
    }
    // The absorbed MLA decode through FA3's qv: scores q·k + qv·v, where q and k are the rope
    // columns (q's and the latent cache's last 64) and qv the absorbed nope part (q's first 512)
    // against v, the cache's first 512 columns: q·cache over all 576, views only.
    at::Tensor q = in.q, k = in.k;
    if (p.v_in_k) {
      const int64_t latent = p.mla.kv_lora_rank, rope = p.mla.qk_rope_head_dim;
      q = in.q.narrow(-1, latent, rope), k = in.k.narrow(-1, latent, rope);
      args["q_v"] =
          p.packed() ? in.q.narrow(-1, 0, latent) : in.q.narrow(-1, 0, latent).transpose(1, 2);
    }
    if (!p.packed()) {
      // FA3 takes [batch, seq, heads, dim] with the last dimension contiguous: a transposed view
      // of the harness's [batch, heads, seq, dim], no copy.
      args["q"] = q.transpose(1, 2);
      args["k"] = k.transpose(1, 2);
      args["v"] = in.v.transpose(1, 2);
      return attnbench::fa3::call_forward(*lib, args).transpose(1, 2);
    }
    // Varlen: the packed rows as they are, with their offsets; a paged cache through its page
    // table and each sequence's key count (FA3 takes no key offsets with a page table).
    args["q"] = q, args["k"] = k, args["v"] = in.v;
    args["cu_seqlens_q"] = *in.cu_seqlens_q;
    args["max_seqlen_q"] = p.seq_len;
    args["max_seqlen_k"] = p.seq_len_kv;
    if (p.paged()) {
      args["page_table"] = *in.page_table;
      args["seqused_k"] = *in.kv_lens;
    } else {
      args["cu_seqlens_k"] = *in.cu_seqlens_kv;
    }
    return attnbench::fa3::call_forward(*lib, args);
  }

 private:
  // The first loaded FA3 library built with what the problem needs; else why none is.
  static bool pick(const Problem& p, const attnbench::fa3::Library*& chosen, std::string& why) {
    for (const attnbench::fa3::Library& lib : attnbench::fa3::libraries()) {
      if (!lib.found()) {
        why += (why.empty() ? "" : "; ") + lib.error;
        continue;
      }
      const attnbench::fa3::Features& f = lib.features;
      std::string missing;
      auto need = [&](bool wanted, bool has, const char* what) {
        if (wanted && !has) missing += (missing.empty() ? "" : ", ") + std::string(what);
      };
      need(p.dtype == DType::f16, f.fp16, "fp16");
      need(p.paged(), f.paged, "paged KV");
      need(p.windowed(), f.local, "local (sliding-window) attention");
      need(p.softcap > 0, f.softcap, "softcap");
      need(p.ragged(), f.varlen, "varlen");
      need(!p.v_in_k && p.v_dim() != p.head_dim, f.hdimdiff192, "q·k 192 / v 128 (HDIMDIFF192)");
      need(p.v_in_k, f.hdimdiff64, "the qv path, q·k 64 / v 512 (HDIMDIFF64)");
      if (missing.empty()) {
        chosen = &lib;
        return true;
      }
      why += (why.empty() ? "" : "; ") + lib.package + " (" + lib.path + ") is built without " +
             missing;
    }
    return false;
  }

  // FA3 takes each scale as a float32 [batch, kv_heads] tensor on the device: made at the first
  // call of a point (outside the timed calls) and kept, so a call launches no fill.
  const at::Tensor& descale(double scale, const Problem& p) {
    const auto key = std::make_tuple(scale, p.batch, p.kv_heads);
    auto it = descales_.find(key);
    if (it == descales_.end()) {
      if (descales_.size() > 64) descales_.clear();
      it = descales_
               .emplace(key, at::full({p.batch, p.kv_heads}, scale,
                                      at::TensorOptions().dtype(at::kFloat).device(at::kCUDA)))
               .first;
    }
    return it->second;
  }
  std::map<std::tuple<double, int64_t, int64_t>, at::Tensor> descales_;
};

}  // namespace

ATTNBENCH_PLUGIN(Fa3Backend)
