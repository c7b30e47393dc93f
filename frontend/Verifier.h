//===- Verifier.h - `--verify-diagnostics` ------------------------*- C++
//-*-===//
//
// Negative tests announce the diagnostics they expect in comments:
//   # expected-error@+1 {{unknown unit `TBs`}}
//   # expected-note@-2 {{[PreviousDefinition]}}
// `@+N`/`@-N` are relative to the comment's line, `@N` is absolute, no `@`
// means the comment's own line. The text is a substring of the message
// followed by ` [Kind]`. The verifier matches each diagnostic of the main
// file to one expectation and reports the rest.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_FRONTEND_VERIFIER_H
#define MLSC_FRONTEND_VERIFIER_H

#include "frontend/Diagnostics.h"

namespace mlsc {

/// Checks \p Produced (diagnostics of a compilation of buffer \p BufferId)
/// against the buffer's expectations. Mismatches are reported to \p Out as
/// ExpectedDiagnosticNotSeen, UnexpectedDiagnostic or MalformedExpectation.
/// Returns true when every diagnostic was expected and every expectation met.
bool verifyDiagnostics(unsigned BufferId, const DiagnosticEngine &Produced,
                       DiagnosticEngine &Out);

} // namespace mlsc

#endif
