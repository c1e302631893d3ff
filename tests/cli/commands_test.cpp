// Every command in cli/main.cpp's table honours the exit-code contract on its
// flags: a bogus flag exits 2, --help exits 0. The list comes from the binary
// itself (`racelab --list-commands` prints the table), so a new command is
// covered without editing this test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "racelab_cli.h"

namespace {

using Result = racelab::testing::CliResult;
using racelab::testing::racelab;

std::vector<std::string> command_table() {
  const Result r = racelab("--list-commands");
  EXPECT_EQ(r.code, 0) << r.output;
  std::vector<std::string> names;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

TEST(Commands, TheTableListsEveryKnownCommand) {
  const auto names = command_table();
  // A floor, not the list: the table is the list.
  for (const char* expected : {"run", "reproduce", "replay", "minimize", "compare", "ci", "merge", "validate",
                               "chrome-trace", "explain", "train", "train-target", "bench", "list", "version", "__worker"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
}

TEST(Commands, EveryCommandRejectsABogusFlagWithExitCode2) {
  const auto names = command_table();
  ASSERT_FALSE(names.empty());
  for (const auto& name : names) {
    const Result r = racelab(name + " --bogus");
    EXPECT_EQ(r.code, 2) << "racelab " << name << " --bogus:\n" << r.output;
    // CLI11's usage message: it names --bogus, or first the missing argument.
    EXPECT_NE(r.output.find("Run with --help"), std::string::npos) << "racelab " << name << " --bogus:\n" << r.output;
  }
}

TEST(Commands, EveryCommandHasHelpThatExits0) {
  for (const auto& name : command_table()) {
    const Result r = racelab(name + " --help");
    EXPECT_EQ(r.code, 0) << "racelab " << name << " --help:\n" << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << "racelab " << name << " --help:\n" << r.output;
  }
}

TEST(Commands, AnUnknownCommandIsAUsageError) {
  const Result r = racelab("no-such-command");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command"), std::string::npos) << r.output;
}

}  // namespace
