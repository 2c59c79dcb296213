// SPDX-License-Identifier: MIT
// Python pickles of plain values, as PyTorch's Flight Recorder writes its dumps
// (torch.distributed's _dump_nccl_trace: a dict of lists, dicts, tuples, strings, numbers,
// booleans and None, pickle protocol 2 and up). Decoded by a small interpreter of the pickle
// machine's data opcodes alone: anything that would name or call Python code (GLOBAL,
// STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, PERSID...) is refused, so a dump from anywhere is
// safe to read. The opcode values are those of CPython's Lib/pickle.py (protocols 2-5).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace commprof {

/// The value `bytes` pickles, as JSON (dicts with string keys as objects, other keys as text;
/// tuples as arrays; bytes refused). Throws Error naming `source`, the byte offset and the
/// opcode for anything else, a truncated pickle, or one nested or memoised beyond bounds.
nlohmann::json read_pickle(std::string_view bytes, const std::string& source);

}  // namespace commprof
