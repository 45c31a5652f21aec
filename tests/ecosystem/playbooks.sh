# playbooks/: ansible-playbook --syntax-check on every playbook, then agent.yml and coordinator.yml
# against localhost (-c local --check: nothing is changed) with every path in a temp directory
# and one board's variables taken from `jetfleet fleet inventory` through ansible-inventory.
. "$(dirname "$0")/lib.sh"

export ANSIBLE_HOME=$tmp/ansible-home ANSIBLE_LOCAL_TEMP=$tmp/ansible-tmp \
    ANSIBLE_REMOTE_TEMP=$tmp/ansible-remote ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
    ANSIBLE_CONFIG=$tmp/ansible.cfg
: >"$tmp/ansible.cfg" # no ansible.cfg of the machine or the user
n=0
for p in "$src"/playbooks/*.yml; do
    ok "syntax-check ${p##*/}" ansible-playbook --syntax-check -i localhost, "$p" && n=$((n + 1))
done
echo "playbooks_syntax_ok=$n/$(ls "$src"/playbooks/*.yml | wc -l)"

# A fleet whose board keeps everything in the temp directory.
mkdir -p "$tmp/etc" "$tmp/var" "$tmp/prefix" "$tmp/fetched"
printf '# the fstab of the test: agent.yml would add a line to it\n' >"$tmp/etc/fstab"
cp "$tmp/etc/fstab" "$tmp/fstab.orig"
cat >"$tmp/fleet.yaml" <<YAML
coordinator:
  agent_endpoint: tcp://127.0.0.1:7712
  data_dir: $tmp/var/lib/jetfleet
boards:
  - name: board-01
    type: host
    storage:
      - {medium: local, mount: /, dataset_root: $tmp/datasets/local}
      - {medium: usb-ssd, mount: $tmp/mnt/usb, dataset_root: $tmp/mnt/usb/datasets}
YAML
ok "fleet inventory" "$build/bin/jetfleet" --config "$tmp/fleet.yaml" fleet inventory \
    -o "$tmp/inventory.yml" || true
ok "board vars" ansible-inventory -i "$tmp/inventory.yml" --host board-01 \
    --output "$tmp/board.json" || true
ok "coordinator vars" ansible-inventory -i "$tmp/inventory.yml" --host localhost \
    --output "$tmp/coordinator.json" || true
echo "not a key: only its existence matters in check mode" >"$tmp/coordinator.key"
cat >"$tmp/vars.yml" <<YAML
ansible_become: false
ansible_python_interpreter: $(command -v python3)
jetfleet_agent_hosts: localhost
jetfleet_coordinator_hosts: localhost
jetfleet_etc_dir: $tmp/etc
jetfleet_var_dir: $tmp/var
jetfleet_prefix: $tmp/prefix
jetfleet_source_dir: $tmp/src
jetfleet_build_dir: $tmp/build
jetfleet_coordinator_key: $tmp/coordinator.key
jetfleet_fetched_keys_dir: $tmp/fetched
jetfleet_service_data_dir: $tmp/var/lib/jetfleet
jetfleet_data_dir: $tmp/var/lib/jetfleet
jetfleet_apt_update_cache: false
jetfleet_manage_service: false
jetfleet_mount_devices:
  usb-ssd: {src: LABEL=jetfleet-usb, fstype: ext4}
YAML

run_check() { # run_check NAME PLAYBOOK VARS_JSON
    local name=$1 play=$2 vars=$3
    if ! ansible-playbook -i localhost, -c local --check --diff "$src/playbooks/$play" \
        -e @"$vars" -e @"$tmp/vars.yml" >"$tmp/$name.log" 2>&1; then
        fail "$play in check mode against localhost:"
        tail -40 "$tmp/$name.log" | sed 's/^/  | /' >&2
        return
    fi
    local recap
    recap=$(grep -E '^localhost +:' "$tmp/$name.log" || true)
    echo "$name: $recap"
    case $recap in
    *" failed=0 "*) ;;
    *) fail "$play: no clean recap: $recap" ;;
    esac
}
run_check agent agent.yml "$tmp/board.json"
# What the agent run would have done: the sudoers rule for the helper, the fstab line for the
# medium with a device, the service settings.
grep -q "jetfleet ALL=(root) NOPASSWD: $tmp/prefix/libexec/jetfleet-privhelper \"\"" "$tmp/agent.log" ||
    fail "agent.yml: the sudoers rule is not in the diff"
grep -q "LABEL=jetfleet-usb $tmp/mnt/usb ext4 defaults,nofail 0 2" "$tmp/agent.log" ||
    fail "agent.yml: the fstab line is not in the diff"
grep -q "JETFLEET_COORDINATOR=tcp://127.0.0.1:7712" "$tmp/agent.log" ||
    fail "agent.yml: /etc/default/jetfleet-agent is not in the diff"
run_check coordinator coordinator.yml "$tmp/coordinator.json"

# Check mode wrote nothing.
written=$(find "$tmp/etc" "$tmp/var" "$tmp/prefix" "$tmp/fetched" -mindepth 1 ! -path "$tmp/etc/fstab")
[ -z "$written" ] || fail "check mode wrote: $written"
cmp -s "$tmp/etc/fstab" "$tmp/fstab.orig" || fail "check mode changed the test's fstab"
[ -e "$tmp/datasets" ] || [ -e "$tmp/mnt" ] && fail "check mode created dataset or mount dirs"
finish
