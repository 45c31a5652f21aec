# Install rules (`cmake --install build --prefix DIR`): the programs to ${CMAKE_INSTALL_BINDIR}
# and the data the agent ships, agent/share/, to ${CMAKE_INSTALL_DATADIR}/jetfleet/, where the
# agent looks for sim_params.yaml (bin/../share/jetfleet, agent/agent_options.c). The nvpmodel
# confs are embedded in the agent at build time as well; the installed copies are the board
# tables for reading. jetfleet-privhelper, the root helper, is not installed here: see
# docs/privileges.md.
include(GNUInstallDirs)

set(jf_install_programs jetfleet-coordinator jetfleet jetfleet-agent jetfleet-train
    jetfleet-train-sim jetfleet-datagen)
# The build tree's RPATH goes at install; keep the directories of the libraries linked from
# outside the tree (libtorch's), so that an installed jetfleet-train still finds them.
set_target_properties(${jf_install_programs} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS ${jf_install_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/jetfleet)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/agent/share/nvpmodel
        DESTINATION ${CMAKE_INSTALL_DATADIR}/jetfleet FILES_MATCHING PATTERN "*.conf")
