// SPDX-License-Identifier: MIT
#include "src/timeline/zstd_frames.hpp"

#include <zstd.h>

#include <memory>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

// Level 1: rank files are written while a run measures; the higher levels cost several times
// the time for a few per cent (docs/analysis.md, "Rank file formats").
constexpr int kLevel = 1;

struct FreeCctx {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct FreeDctx {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

}  // namespace

bool starts_with_zstd_frame(std::string_view data) {
  return data.size() >= 4 && static_cast<unsigned char>(data[0]) == 0x28 &&
         static_cast<unsigned char>(data[1]) == 0xB5 &&
         static_cast<unsigned char>(data[2]) == 0x2F && static_cast<unsigned char>(data[3]) == 0xFD;
}

std::string zstd_frame(std::string_view text) {
  thread_local std::unique_ptr<ZSTD_CCtx, FreeCctx> cctx(ZSTD_createCCtx());
  if (!cctx) throw Error("zstd: cannot create a compression context");
  ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, kLevel);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t n =
      ZSTD_compress2(cctx.get(), out.data(), out.size(), text.data(), text.size());
  if (ZSTD_isError(n)) throw Error(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

void read_zstd_frames(std::string_view data, const std::string& source, std::string& out) {
  thread_local std::unique_ptr<ZSTD_DCtx, FreeDctx> dctx(ZSTD_createDCtx());
  if (!dctx) throw Error("zstd: cannot create a decompression context");
  std::size_t at = 0;
  std::string why;
  while (at < data.size()) {
    const std::string_view rest = data.substr(at);
    const std::size_t frame = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
    if (ZSTD_isError(frame)) {
      why = ZSTD_getErrorName(frame);
      break;
    }
    const unsigned long long size = ZSTD_getFrameContentSize(rest.data(), frame);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > (1ULL << 40)) {
      why = "a frame without its content size";
      break;
    }
    const std::size_t old = out.size();
    out.resize(old + size);
    const std::size_t n =
        ZSTD_decompressDCtx(dctx.get(), out.data() + old, size, rest.data(), frame);
    if (ZSTD_isError(n) || n != size) {
      out.resize(old);
      why = ZSTD_isError(n) ? ZSTD_getErrorName(n) : "a frame shorter than it says";
      break;
    }
    at += frame;
  }
  if (at == data.size()) return;
  if (at == 0) {
    throw Error("'" + source + "' is not a zstd rank file: its first frame cannot be read (" + why +
                ")");
  }
  log::warn(source + ": its last " + std::to_string(data.size() - at) +
            " bytes are no whole zstd frame (" + why +
            "; the writer stopped while appending a step?): dropped them");
}

}  // namespace commprof
