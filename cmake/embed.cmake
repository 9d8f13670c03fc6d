# fmsim_embed_data: compiles every file under data/ into the binary, so the
# command runs anywhere on the shipped catalog without a data directory. The published
# measurements under validation/ (*.csv) are embedded too, as "validation/<file>", so that
# `fmsim validate ...` defaults to them from any directory.
function(fmsim_embed_data target data_dir)
  file(GLOB_RECURSE files RELATIVE ${data_dir} CONFIGURE_DEPENDS
       ${data_dir}/*.yaml ${data_dir}/*.json ${data_dir}/*.csv)
  list(SORT files)
  set(validation_dir ${FMSIM_SOURCE_ROOT}/validation)
  file(GLOB validation_files RELATIVE ${validation_dir} CONFIGURE_DEPENDS ${validation_dir}/*.csv)
  list(SORT validation_files)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded_data_table.cpp)
  set(abs_files)
  foreach(f ${files})
    list(APPEND abs_files ${data_dir}/${f})
  endforeach()
  foreach(f ${validation_files})
    list(APPEND abs_files ${validation_dir}/${f})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DDATA_DIR=${data_dir} -DOUT=${out}
            "-DFILES=${files}" -DVALIDATION_DIR=${validation_dir} "-DVALIDATION_FILES=${validation_files}"
            -P ${FMSIM_SOURCE_ROOT}/cmake/embed_script.cmake
    DEPENDS ${FMSIM_SOURCE_ROOT}/cmake/embed_script.cmake
    COMMENT "Embedding data/ (${CMAKE_CURRENT_LIST_DIR})"
    VERBATIM)
  # The generated source names the files (the assembler's .incbin reads them), so its object, not
  # the source, depends on their contents; it stays out of unity batches so that dependency is its own.
  set_source_files_properties(${out} PROPERTIES OBJECT_DEPENDS "${abs_files}" SKIP_UNITY_BUILD_INCLUSION ON)
  target_sources(${target} PRIVATE ${out})
endfunction()
