// SPDX-License-Identifier: MIT
// What every table of the report's fields (report_fields_<table>.hpp) is written with: the generic
// table and the report's row types, and U for the units.
#pragma once

#include "analysis/report.hpp"
#include "src/fields/field_table.hpp"

namespace commprof::report_fields {

// The generic table (Field, Table, field<>, the readers), as report_fields:: names it.
using namespace fields;

using U = ReportUnit;  // short, for the tables

}  // namespace commprof::report_fields
