# The module graph: each library sees only its own headers and those of the modules it links, and
# a test (ModuleLinks.EqualIncludes, tools/check_module_links.cmake) proves that each library in
# src/ links exactly the fmsim libraries its sources and headers include.
# fmsim_register_module(module): called by src/CMakeLists.txt after add_subdirectory(module).
# Every library target of src/<module>/ gets ${CMAKE_BINARY_DIR}/include/<module> as its PUBLIC
# include root: a folder holding one link, <module> -> src/<module>, so "training/x.hpp" resolves
# only in targets that link fmsim_training (PUBLIC links pass the root on with the code), and a
# backwards include fails to compile. The targets are also recorded for the link check.
function(fmsim_register_module module)
  set(root ${CMAKE_BINARY_DIR}/include/${module})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${FMSIM_SOURCE_ROOT}/src/${module} ${root}/${module} SYMBOLIC)
  get_property(targets DIRECTORY ${FMSIM_SOURCE_ROOT}/src/${module} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type MATCHES "LIBRARY$")
      target_include_directories(${target} PUBLIC ${root})
      set_property(GLOBAL APPEND PROPERTY FMSIM_MODULE_TARGETS ${target})
      set_property(GLOBAL PROPERTY FMSIM_MODULE_DIR_${target} ${module})
    endif()
  endforeach()
endfunction()

# fmsim_write_module_targets(file): the libraries, their folders, sources and links, for the check.
function(fmsim_write_module_targets file)
  get_property(targets GLOBAL PROPERTY FMSIM_MODULE_TARGETS)
  set(text "# Written by cmake/module_links.cmake at configure time; read by tools/check_module_links.cmake.\n")
  string(APPEND text "set(FMSIM_SOURCE_ROOT \"${FMSIM_SOURCE_ROOT}\")\nset(FMSIM_TARGETS \"${targets}\")\n")
  foreach(target ${targets})
    get_property(dir GLOBAL PROPERTY FMSIM_MODULE_DIR_${target})
    get_target_property(sources ${target} SOURCES)
    get_target_property(links ${target} LINK_LIBRARIES)
    if(NOT links)
      set(links "")
    endif()
    set(modules "")
    foreach(link ${links})
      if(link MATCHES "^fmsim_" AND TARGET ${link})
        list(APPEND modules ${link})
      endif()
    endforeach()
    set(paths "")
    foreach(source ${sources})
      if(NOT IS_ABSOLUTE ${source})
        set(source ${FMSIM_SOURCE_ROOT}/src/${dir}/${source})
      endif()
      if(source MATCHES "\\.(cpp|hpp)$" AND source MATCHES "^${FMSIM_SOURCE_ROOT}/src/")  # not generated files
        list(APPEND paths ${source})
      endif()
    endforeach()
    string(APPEND text "set(FMSIM_DIR_${target} \"${dir}\")\n"
                       "set(FMSIM_SOURCES_${target} \"${paths}\")\n"
                       "set(FMSIM_LINKS_${target} \"${modules}\")\n")
  endforeach()
  file(WRITE ${file} "${text}")
endfunction()
