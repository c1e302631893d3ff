// cli/known_messages.h -- the error messages racelab knows, each mapped to the
// scenarios that reproduce it. The one table `racelab explain` reads.
//
// A user pastes what they saw -- often a whole traceback line -- so a message is
// recognised by fragments, not by equality: every fragment of one of its
// alternatives must occur in the pasted text, compared case-insensitively with
// whitespace runs collapsed (a message wrapped over two lines still matches).
//
// Which mitigations hold is NOT in this table: `racelab explain` reads it from
// the named scenarios' expectations, so it cannot disagree with the catalogue.
#ifndef RACELAB_CLI_KNOWN_MESSAGES_H_
#define RACELAB_CLI_KNOWN_MESSAGES_H_

#include <string>
#include <vector>

namespace racelab::cli {

struct KnownMessage {
  std::string id;       // short stable name, e.g. "fx_nested_trace"
  std::string message;  // the message as upstream prints it (greppable in the repository)
  // Alternatives; each is a list of fragments that must all occur.
  std::vector<std::vector<std::string>> fragments;
  std::string meaning;                 // what it means, in one paragraph
  std::vector<std::string> scenarios;  // catalogue scenario names that reproduce it
  std::string walkthrough;             // where to read on (a path in the repository, with anchor)
};

const std::vector<KnownMessage>& known_messages();

// Lower case, every whitespace run one space, trimmed.
std::string normalise_message(const std::string& text);

// Every known message whose fragments occur in `text` (usually zero or one).
std::vector<const KnownMessage*> match_message(const std::string& text);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_KNOWN_MESSAGES_H_
