// reports/svg.h -- the few SVG pieces the HTML report draws with.
//
// Charts are plain inline SVG with <title> tooltips: no script, no external
// font or library, so the report is one file that opens anywhere.
#ifndef RACELAB_REPORTS_SVG_H_
#define RACELAB_REPORTS_SVG_H_

#include <string>

namespace racelab::reports::svg {

std::string open(double width, double height, const std::string& css_class, const std::string& label);
std::string close();
std::string rect(double x, double y, double w, double h, const std::string& fill, const std::string& title = "",
                 const std::string& extra = "");
std::string line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1);
std::string text(double x, double y, const std::string& content, const std::string& anchor = "start",
                 const std::string& extra = "");
std::string circle(double cx, double cy, double r, const std::string& fill, const std::string& title = "");

}  // namespace racelab::reports::svg

#endif  // RACELAB_REPORTS_SVG_H_
