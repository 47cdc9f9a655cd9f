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
           "GQA, decode, varlen; softcap (fa3-fwd), paged KV, window and fp16 (tokenspeed-fa3)";
  }

  Support supports(const Problem& p) const override {
    if (auto cuda = attnbench::sdpa::needs_cuda(p, "FlashAttention-3"); !cuda.supported)
      return cuda;
    if (p.direction == attnbench::Direction::bwd)
      return Support::no("the FA3 wheels are built forward-only (FLASHATTENTION_DISABLE_BACKWARD)");
    if (p.dtype == DType::f32) return Support::no("FlashAttention-3 has no fp32 kernels");
    if (p.head_dim > 256 || p.head_dim % 8 != 0)
      return Support::no("FlashAttention-3 needs head_dim <= 256 and a multiple of 8, not " +
                         std::to_string(p.head_dim));
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
    if (!p.packed()) {
      // FA3 takes [batch, seq, heads, dim] with the last dimension contiguous: a transposed view
      // of the harness's [batch, heads, seq, dim], no copy.
      args["q"] = in.q.transpose(1, 2);
      args["k"] = in.k.transpose(1, 2);
      args["v"] = in.v.transpose(1, 2);
      return attnbench::fa3::call_forward(*lib, args).transpose(1, 2);
    }
    // Varlen: the packed rows as they are, with their offsets; a paged cache through its page
    // table and each sequence's key count (FA3 takes no key offsets with a page table).
    args["q"] = in.q, args["k"] = in.k, args["v"] = in.v;
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
