// reports/xml_escape.h -- text made safe for XML and HTML, the one escaper of
// the JUnit, SVG and HTML renderers.
#ifndef RACELAB_REPORTS_XML_ESCAPE_H_
#define RACELAB_REPORTS_XML_ESCAPE_H_

#include <string>

namespace racelab::reports {

// & < > " ' become entities, so the result is safe in text and in attributes
// quoted either way. Control characters XML 1.0 forbids even as references
// (all below 0x20 but tab, newline, carriage return) become '?'.
std::string xml_escape(const std::string& text);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_XML_ESCAPE_H_
