# Every target's direct link dependencies, written at generate time to
# <build>/layers/targets.tsv (name, type, source folder, link libraries): the layer test
# (tests/layers) checks them against the layer rules, and scripts/architecture-graph draws
# docs/architecture.md's picture from them.
function(collage_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    collage_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

collage_targets_below(${PROJECT_SOURCE_DIR} collage_all_targets)
set(collage_layer_rows "")
foreach(target ${collage_all_targets})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "UTILITY" OR type STREQUAL "INTERFACE_LIBRARY")
    continue()
  endif()
  get_target_property(source_dir ${target} SOURCE_DIR)
  file(RELATIVE_PATH source_dir ${PROJECT_SOURCE_DIR} ${source_dir})
  string(APPEND collage_layer_rows
    "${target}\t${type}\t${source_dir}\t$<JOIN:$<TARGET_PROPERTY:${target},LINK_LIBRARIES>,,>\n")
endforeach()
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/layers/targets.tsv CONTENT "${collage_layer_rows}")
