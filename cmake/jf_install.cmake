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
# The libtorch shim that the jetfleet CLI loads on first use (common/torch/jf_torch_lazy.c finds
# it at bin/<the relative path from BINDIR to LIBDIR/jetfleet>); its own RPATH as the programs'.
set_target_properties(jetfleet_torch PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS jetfleet_torch LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/jetfleet)
install(FILES ${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/jetfleet)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/agent/share/nvpmodel
        DESTINATION ${CMAKE_INSTALL_DATADIR}/jetfleet FILES_MATCHING PATTERN "*.conf")

# systemd units (systemd/*.service.in), configured with this configuration's full install paths:
# they name the programs, the config directory and the helper by absolute path, so they follow
# CMAKE_INSTALL_PREFIX at configure time (not a later `cmake --install --prefix`). /usr puts the
# config under /etc, /usr/local under /usr/local/etc (GNUInstallDirs). JF_SYSTEMD_UNITDIR is
# relative to the prefix; systemd reads /usr/lib/systemd/system and /usr/local/lib/systemd/system.
set(JF_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
    "Where the systemd units go, relative to the install prefix")
set(JF_UNIT_BINDIR ${CMAKE_INSTALL_FULL_BINDIR})
set(JF_UNIT_LIBEXECDIR ${CMAKE_INSTALL_FULL_LIBEXECDIR})
set(JF_UNIT_SYSCONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR})
set(JF_UNIT_DOCDIR ${CMAKE_INSTALL_FULL_DOCDIR})
foreach(unit jetfleet-coordinator jetfleet-agent)
  configure_file(${PROJECT_SOURCE_DIR}/systemd/${unit}.service.in
                 ${PROJECT_BINARY_DIR}/systemd/${unit}.service @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/systemd/${unit}.service DESTINATION ${JF_SYSTEMD_UNITDIR})
endforeach()

# Documentation and examples (share/doc/jetfleet): the README, docs/, an example fleet.yaml,
# the example sweeps and the agent unit's environment file. The playbooks go with the data
# (share/jetfleet/playbooks) so that an installed coordinator host can prepare its boards.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/fleet.yaml.example
              ${PROJECT_SOURCE_DIR}/systemd/jetfleet-agent.default
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sweeps DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/playbooks DESTINATION ${CMAKE_INSTALL_DATADIR}/jetfleet)

# bash completion for jetfleet, where bash-completion looks for it under the prefix.
install(FILES ${PROJECT_SOURCE_DIR}/completion/jetfleet.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME jetfleet)

# A Debian package of the same install (`cpack -G DEB` in the build directory). Configure with
# -DCMAKE_INSTALL_PREFIX=/usr for one: the package installs under the configured prefix, which
# the units name. dpkg-shlibdeps derives the library dependencies. The package creates no user
# and starts nothing: playbooks/ (or the operator) does that (docs/deploy.md).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME jetfleet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Coordinator, agent and tools for training experiments on NVIDIA Jetson boards")
set(CPACK_PACKAGE_CONTACT "jetfleet maintainers <jetfleet@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "sudo")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
include(CPack)
