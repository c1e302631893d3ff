// engine/dpor.h -- dpor:P, exhaustive search with reduction: every class of
// equivalent schedules that has a member with at most P preemptions, each
// explored by one schedule or a few, instead of every schedule (dfs:P).
//
// Two schedules are equivalent (one Mazurkiewicz trace, one class) when one
// becomes the other by swapping adjacent steps of different threads that are
// independent: neither names no object, and they touch different objects or
// only read the same one (engine/strategy.h dependent()). A step also counts
// as writing what it released while it ran (Decision::touched), because
// releasing a mutex or notifying a condition variable decides whether a
// blocked thread can go on. Equivalent schedules end in the same state, so
// exploring one per class loses no outcome.
//
// The algorithm is stateless dynamic partial-order reduction with source
// sets (Flanagan & Godefroid, POPL 2005; Abdulla, Aronis, Jonsson, Sagonas,
// POPL 2014): after each trial, every race -- two dependent steps of different
// threads with nothing ordering them in between -- adds to the choice point
// before the first step a thread that can start the reversed order, unless one
// such thread is already there; when none of them could run there (blocked),
// every runnable thread is added. The preemption bound makes reordering cost
// preemptions, which plain DPOR does not know: a reversal that is too
// expensive where the race is may be cheap where the running thread's block of
// steps began. So each race also adds its thread there (bounded POR, Coons,
// Musuvathi, McKinley, OOPSLA 2013). Sleep sets are left out: they prune a
// schedule because an equivalent one was explored, and under a preemption
// bound that one may have been over the bound and never run.
//
// Trials are ordinary follow-a-prefix trials (engine/strategy.h), so every
// schedule is recorded, replayable and minimisable as with dfs. The driver
// counts the classes it explored (classes()); exhausted() says the search
// finished and no run disagreed with its prefix.
#ifndef RACELAB_ENGINE_DPOR_H_
#define RACELAB_ENGINE_DPOR_H_

#include <memory>

#include "engine/driver.h"

namespace racelab {

std::unique_ptr<StrategyDriver> make_dpor_driver(int preemption_bound);

}  // namespace racelab

#endif  // RACELAB_ENGINE_DPOR_H_
