// trainer/compile/point_names.h -- every interleaving point of the system under
// test, in one place. The strings are stable: they appear in saved schedules,
// timelines and reports, so renaming one invalidates old schedule files.
#ifndef TRAINER_COMPILE_POINT_NAMES_H_
#define TRAINER_COMPILE_POINT_NAMES_H_

namespace trainer::points {
// (filled in by the compile layer)
}  // namespace trainer::points

#endif  // TRAINER_COMPILE_POINT_NAMES_H_
