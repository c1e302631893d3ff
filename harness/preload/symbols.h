// preload/symbols.h -- names for addresses in the program, for messages: the
// mutex a deadlock is about, the function a thread is in.
//
// The dynamic symbol table (dladdr) has only what a program exports, which
// without -rdynamic is next to nothing of its own. So the static symbol table
// (.symtab) of the object an address falls in is read as well: static and
// global objects and every function get their names, as long as the file is
// not stripped. Read lazily, only when a message needs a name, and kept for
// the rest of the trial process.
#ifndef RACELAB_PRELOAD_SYMBOLS_H_
#define RACELAB_PRELOAD_SYMBOLS_H_

#include <string>

namespace racelab::preload {

// "lock_a" (an object at its symbol's start), "table+16" (inside one),
// "worker+0x1c" (inside a function: `code` true), or "" when no symbol covers it.
std::string symbol_for(const void* address, bool code);

// A lock's or other object's name for a message: its symbol, else its address.
std::string object_name(const void* object);

}  // namespace racelab::preload

#endif  // RACELAB_PRELOAD_SYMBOLS_H_
