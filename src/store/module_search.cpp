#include "store/module_search.h"

#include <filesystem>
#include <system_error>

namespace tritonrt::detail {
namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool is_folder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The file `stem` names in `folder` as the finder's loaders try them: extensions first
// (any `stem.<tag>.so` or `stem.so`), then source, then bytecode.
std::optional<fs::path> module_file(const fs::path& folder, const std::string& stem) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(stem + ".") && name.ends_with(".so") && is_file(it->path())) return it->path();
  }
  for (const char* suffix : {".py", ".pyc"}) {
    if (const fs::path file = folder / (stem + suffix); is_file(file)) return file;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_module_file(std::string_view dotted, const std::vector<std::string>& search_path) {
  std::vector<fs::path> folders(search_path.begin(), search_path.end());
  std::string_view rest = dotted;
  while (true) {
    const auto dot = rest.find('.');
    const std::string part(rest.substr(0, dot));
    const bool last = dot == std::string_view::npos;
    if (part.empty()) return std::nullopt;
    std::vector<fs::path> portions;  // namespace package folders, used only when nothing else is found
    std::optional<fs::path> package, file;
    for (const auto& folder : folders) {
      std::error_code ec;
      if (!is_folder(folder)) {
        if (fs::exists(folder, ec)) return std::nullopt;  // an archive or other file: Python's to look into
        continue;
      }
      const fs::path candidate = folder / part;
      if (is_folder(candidate)) {
        if (auto init = module_file(candidate, "__init__")) {
          package = candidate;
          file = init;
          break;
        }
        portions.push_back(candidate);
      }
      if ((file = module_file(folder, part))) break;
    }
    if (last) {
      if (!file) return std::nullopt;
      return file->string();
    }
    if (package) {
      folders = {*package};
    } else if (!file && !portions.empty()) {
      folders = portions;
    } else {
      return std::nullopt;  // not found, or a module that is not a package
    }
    rest.remove_prefix(dot + 1);
  }
}

std::vector<std::string> search_path_folders(std::string_view list) {
  std::vector<std::string> folders;
  while (true) {
    const auto colon = list.find(':');
    if (const std::string entry(list.substr(0, colon)); !entry.empty()) {
      std::error_code ec;
      const auto absolute = fs::absolute(entry, ec);
      folders.push_back(ec ? entry : absolute.lexically_normal().string());
    }
    if (colon == std::string_view::npos) return folders;
    list.remove_prefix(colon + 1);
  }
}

}  // namespace tritonrt::detail
