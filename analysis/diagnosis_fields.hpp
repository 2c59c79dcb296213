// SPDX-License-Identifier: MIT
// What `commprof diagnose` writes of each problem, as a field table (src/fields/field_table.hpp):
// declared once for the text's evidence table and the JSON's "problems" (schema
// commprof.diagnosis v1).
#pragma once

#include <iterator>

#include "analysis/diagnosis.hpp"
#include "src/fields/field_formats.hpp"

namespace commprof::diagnosis_fields {

using diagnosis::Problem;
using fields::Field;
using fields::field;
using U = ReportUnit;

inline constexpr const char* kSchema = "commprof.diagnosis";
inline constexpr int kVersion = 1;

inline bool no_seq(const Problem& p) { return p.seq < 0; }
inline bool no_step(const Problem& p) { return p.step < 0; }
inline bool no_cost(const Problem& p) { return p.kind != "straggler"; }

inline constexpr Field<Problem> kProblemFields[] = {
    field<&Problem::kind>("class", U::kText, "class",
                          "never_launched, no_record, arguments_differ, launched_not_finished or "
                          "straggler."),
    field<&Problem::comm>("comm", U::kText, "comm",
                          "The communicator; a transfer's is \"<comm> A->B\" (world ranks)."),
    field<&Problem::function>("function", U::kText, "function",
                              "The collective (\"p2p\": a transfer), as the source names it."),
    field<&Problem::seq>("seq", U::kId, "seq",
                         "Its sequence number on the communicator; a transfer: the k-th from A "
                         "to B.")
        .na_if(no_seq)
        .prom("commprof_diagnosis_seq"),
    field<&Problem::name>("op", U::kText, "op", "The op's name, as first recorded."),
    field<&Problem::step>("step", U::kId, "step", "The step it belongs to.")
        .na_if(no_step)
        .prom("commprof_diagnosis_step"),
    field<&Problem::ranks>("ranks", U::kText, "ranks", "The ranks the verdict names."),
    field<&Problem::waiting>("waiting", U::kText, "waiting",
                             "The ranks that submitted it and had not finished it."),
    field<&Problem::cost_ns>("cost_ns", U::kNs, "cost(us)",
                             "A straggler: the mean wait it caused each other rank in the step.")
        .na_if(no_cost)
        .prom("commprof_diagnosis_straggler_cost_seconds")
        .shown_as("%.1f", 1, 1e3),
    field<&Problem::verdict>("verdict", U::kText, "verdict", "One line: class, key, ranks.")
        .in_json_only(),
    field<&Problem::evidence>("evidence", U::kText, "evidence",
                              "What the sources recorded that the verdict rests on."),
};
inline constexpr fields::Table<Problem> kProblems{
    "problems",
    "problems",
    {},
    "commprof_diagnosis_problem_info",
    "A problem diagnose found; its text fields as labels.",
    kProblemFields,
    std::size(kProblemFields)};
static_assert(fields::well_formed(kProblems));

}  // namespace commprof::diagnosis_fields
