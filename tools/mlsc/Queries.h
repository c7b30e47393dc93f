//===- Queries.h - Selecting a file's solve and sweep blocks -----*- C++
//-*-===//
#ifndef MLSC_TOOLS_MLSC_QUERIES_H
#define MLSC_TOOLS_MLSC_QUERIES_H

#include "tools/mlsc/Driver.h"

namespace mlsc::driver {

/// The queries of kind \p K (and name \p Name when given); empty after
/// reporting an UnknownTarget usage error.
std::vector<const query::Query *> selectQueries(const Compilation &C,
                                                query::Query::Kind K,
                                                const std::string &Name);

} // namespace mlsc::driver

#endif
