# Issue #13, "Deployment" and "Programs behave like the ecosystem's": shell-driven tests with the
# label `ecosystem` (plus `integration`: they run built programs). Each works in a mktemp
# directory that it removes, talks to nothing beyond this machine and changes nothing outside it
# (the install goes to a DESTDIR, Ansible runs in check mode with connection local).
#   integration.install_tree   cmake --install into a DESTDIR: the tree, every installed program's
#                              --help and --version, the bash completion, systemd-analyze verify
#                              on the units
#   integration.fleet_inventory `jetfleet fleet inventory` read back by ansible-inventory, and
#                              its bad inputs
#   integration.playbooks      ansible-playbook --syntax-check on every playbook, then agent.yml
#                              and coordinator.yml against localhost (-c local --check)
math(EXPR jf_eco_timeout "240 * ${JF_TEST_TIMEOUT_SCALE}")
foreach(t install_tree fleet_inventory playbooks)
  add_test(NAME integration.${t}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/${t}.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  set_tests_properties(integration.${t} PROPERTIES LABELS "integration;ecosystem"
                       TIMEOUT ${jf_eco_timeout})
endforeach()
