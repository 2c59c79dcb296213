// SPDX-License-Identifier: MIT
#include "analysis/report/chrome_trace.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

namespace commprof {
namespace {

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// ns → "µs.nnn" exactly: a double would lose nanoseconds on a monotonic clock's large values.
std::string micros(std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t a =
      negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", negative ? "-" : "",
                static_cast<unsigned long long>(a / 1000),
                static_cast<unsigned long long>(a % 1000));
  return buf;
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& os) : os_(os) {
  os_ << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"commprof report\","
         "\"clock\":\"rank 0 host steady clock\"},\"traceEvents\":[\n";
}

void ChromeTraceWriter::event_separator() {
  if (!first_) os_ << ",\n";
  first_ = false;
}

void ChromeTraceWriter::add(const RankTimeline& t) {
  const int pid = t.rank;
  event_separator();
  os_ << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid
      << ",\"tid\":0,\"args\":{\"name\":"
      << quoted("rank " + std::to_string(t.rank) + " (" + t.host + ")") << "}}";
  event_separator();
  os_ << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << pid
      << ",\"tid\":0,\"args\":{\"sort_index\":" << pid << "}}";
  std::map<std::string, int> tids;  // stream → thread id, in order of first appearance
  for (const StepRecord& step : t.steps) {
    for (const OpRecord& op : step.ops) {
      auto [it, inserted] = tids.try_emplace(op.stream, static_cast<int>(tids.size()) + 1);
      if (inserted) {
        event_separator();
        os_ << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << it->second
            << ",\"args\":{\"name\":" << quoted(op.stream) << "}}";
      }
      event_separator();
      os_ << "{\"name\":" << quoted(op.name) << ",\"cat\":\"" << category_name(op.category)
          << "\",\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << it->second
          << ",\"ts\":" << micros(op.start_ns + t.clock_offset_ns)
          << ",\"dur\":" << micros(op.duration_ns()) << ",\"args\":{\"bytes\":" << op.bytes
          << ",\"flops\":" << nlohmann::json(op.flops).dump() << ",\"step\":" << step.index;
      if (!op.collective.empty()) os_ << ",\"collective\":" << quoted(op.collective);
      if (!op.comm.empty()) os_ << ",\"comm\":" << quoted(op.comm) << ",\"seq\":" << op.seq;
      os_ << "}}";
    }
  }
}

void ChromeTraceWriter::finish() { os_ << "\n]}\n"; }

}  // namespace commprof
