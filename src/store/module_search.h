// Which file `import package.module` finds, answered without Python: the standard path
// finder's walk (regular packages, namespace packages, module files), so that a kernel named
// by module is served from the index only while its import would still find the file it was
// compiled from.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tritonrt::detail {

/// The file Python's path finder imports for `dotted` when searching the folders
/// `search_path` in order: a package's `__init__` file, or the module's own file (a `.py`,
/// a compiled extension or a `.pyc`, in the finder's order). nullopt when nothing is found,
/// when the module would be a namespace package (no file), or when the walk meets what only
/// Python can look into (a search path entry that is a file, such as a zip archive).
std::optional<std::string> find_module_file(std::string_view dotted, const std::vector<std::string>& search_path);

/// The folders of a PYTHONPATH-style list (`:`-separated, empty entries skipped), each made
/// absolute as Python's site module makes sys.path's (one that cannot be is kept as written).
std::vector<std::string> search_path_folders(std::string_view list);

}  // namespace tritonrt::detail
