#include "reports/svg.h"

#include <fmt/format.h>

#include "reports/xml_escape.h"

namespace racelab::reports::svg {

std::string open(double width, double height, const std::string& css_class, const std::string& label) {
  return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" class="{}" width="{:.0f}" height="{:.0f}" )"
                     R"(viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="{}">)",
                     css_class, width, height, width, height, xml_escape(label));
}

std::string close() { return "</svg>"; }

static std::string titled(const std::string& element, const std::string& title, const std::string& closing) {
  if (title.empty()) return element + "/>";
  return element + "><title>" + xml_escape(title) + "</title></" + closing + ">";
}

std::string rect(double x, double y, double w, double h, const std::string& fill, const std::string& title,
                 const std::string& extra) {
  return titled(fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" {})", x, y,
                            w < 0 ? 0 : w, h < 0 ? 0 : h, fill, extra),
                title, "rect");
}

std::string line(double x1, double y1, double x2, double y2, const std::string& stroke, double width) {
  return fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="{}"/>)", x1,
                     y1, x2, y2, stroke, width);
}

std::string text(double x, double y, const std::string& content, const std::string& anchor, const std::string& extra) {
  return fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}" {}>{}</text>)", x, y, anchor, extra,
                     xml_escape(content));
}

std::string circle(double cx, double cy, double r, const std::string& fill, const std::string& title) {
  return titled(fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}")", cx, cy, r, fill), title,
                "circle");
}

}  // namespace racelab::reports::svg
