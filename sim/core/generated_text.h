#pragma once
// Tables in the docs written from the tables in the code (config keys, run options): a doc keeps
// each between two marker lines, and a test compares the doc with the text regenerated.
#include <string>

namespace npusim {

/// `doc` (read from `where`) with the text between the lines
/// "<!-- BEGIN generated NAME table: REGENERATE -->" and "<!-- END generated NAME table -->"
/// replaced by `table`. InputError naming `where` when either marker is missing.
std::string with_generated_block(const std::string& doc, const std::string& where, const std::string& name,
                                 const std::string& table, const std::string& regenerate);

/// Whether `doc` has the BEGIN marker of the generated table `name`.
bool has_generated_block(const std::string& doc, const std::string& name);

}  // namespace npusim
