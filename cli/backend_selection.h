// cli/backend_selection.h -- `compare --backend model,pytorch` and `ci --backend`:
// which side of the catalogue a campaign runs, the model's or real torch's, or
// both, so that a real-torch scenario's verdicts stand beside its model twin's
// (reports/beside_model.h).
#ifndef RACELAB_CLI_BACKEND_SELECTION_H_
#define RACELAB_CLI_BACKEND_SELECTION_H_

#include <string>
#include <vector>

namespace racelab::cli {

// The scenario files to run for `backends` ("model", "pytorch" or both, comma
// separated):
//  - no `paths`: the catalogue (`catalogue`, the model's scenarios) for model,
//    its pytorch/ folder for pytorch;
//  - `paths` (files or directories): the files whose workload runs on a listed
//    backend (host "" is model, "python" is pytorch);
//  - with model listed, each real-torch scenario also brings its model twin
//    (its "model": {"scenario": NAME}) when none of the files is NAME: NAME.json
//    beside the real-torch file's folder, else in the catalogue.
// A file that cannot be read or parsed is kept, for the loader to report.
// Returns false, with *error, for a backend name other than model or pytorch.
bool select_backends(const std::string& backends, const std::vector<std::string>& paths,
                     const std::string& catalogue, std::vector<std::string>* files, std::string* error);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_BACKEND_SELECTION_H_
