# `jetfleet fleet inventory` read back by Ansible (ansible-inventory --list): the groups, one host
# per board with its type, platform, labels, media and dataset roots, the coordinator group, the
# agents' endpoint; and its bad inputs give a clear error and no file.
. "$(dirname "$0")/lib.sh"

jetfleet=$build/bin/jetfleet
cat >"$tmp/fleet.yaml" <<'YAML'
coordinator:
  agent_endpoint: tcp://*:7711
  data_dir: /var/lib/jetfleet
boards:
  - name: nx-01
    type: xavier-nx
    labels: [rack-b, usb]
    storage:
      - {medium: sd, mount: /, dataset_root: /home/jetson/datasets}
      - {medium: nvme, mount: /mnt/nvme, dataset_root: /mnt/nvme/datasets}
  - name: "123"
    type: sim
    simulates: nano
    storage:
      - {medium: sd, mount: /, dataset_root: /tmp/jetfleet-sim/datasets}
YAML
ok "fleet inventory -o" "$jetfleet" --config "$tmp/fleet.yaml" fleet inventory \
    --coordinator-host lab-server.example -o "$tmp/inventory.yml" || true
[ -e "$tmp/inventory.yml.tmp" ] && fail "the temporary file was left behind"
export ANSIBLE_HOME=$tmp/ansible-home ANSIBLE_LOCAL_TEMP=$tmp/ansible-tmp ANSIBLE_NOCOLOR=1
ok "ansible-inventory" ansible-inventory -i "$tmp/inventory.yml" --list --output "$tmp/list.json" || true
python3 - "$tmp/list.json" "$tmp/fleet.yaml" <<'PY' || fail "the inventory read back differs"
import json, os, sys
inv = json.load(open(sys.argv[1]))
fleet = os.path.realpath(sys.argv[2])
hv = inv["_meta"]["hostvars"]
problems = []
def want(what, got, expected):
    if got != expected:
        problems.append(f"{what}: got {got!r}, expected {expected!r}")
want("agents", sorted(inv["agents"]["hosts"]), ["123", "nx-01"])
want("coordinator", inv["coordinator"]["hosts"], ["localhost"])
nx, sim = hv.get("nx-01", {}), hv.get("123", {})
want("nx-01 board", nx.get("jetfleet_board"), "nx-01")
want("nx-01 type", nx.get("jetfleet_board_type"), "xavier-nx")
want("nx-01 platform", nx.get("jetfleet_platform"), "auto")
want("nx-01 labels", nx.get("jetfleet_labels"), ["rack-b", "usb"])
want("nx-01 storage", nx.get("jetfleet_storage"),
     [{"medium": "sd", "mount": "/", "dataset_root": "/home/jetson/datasets"},
      {"medium": "nvme", "mount": "/mnt/nvme", "dataset_root": "/mnt/nvme/datasets"}])
want("nx-01 dataset roots", nx.get("jetfleet_dataset_roots"),
     ["/home/jetson/datasets", "/mnt/nvme/datasets"])
want("123 board (a string)", sim.get("jetfleet_board"), "123")
want("123 type", sim.get("jetfleet_board_type"), "sim")
want("123 device type", sim.get("jetfleet_device_type"), "nano")
want("123 platform", sim.get("jetfleet_platform"), "sim:nano")
want("123 labels", sim.get("jetfleet_labels"), [])
want("fleet file", nx.get("jetfleet_fleet_yaml"), fleet)
want("endpoint", nx.get("jetfleet_coordinator_endpoint"), "tcp://lab-server.example:7711")
lh = hv.get("localhost", {})
want("coordinator connection", lh.get("ansible_connection"), "local")
want("data dir", lh.get("jetfleet_data_dir"), "/var/lib/jetfleet")
want("bind endpoint", lh.get("jetfleet_agent_endpoint"), "tcp://*:7711")
for p in problems:
    print("  " + p, file=sys.stderr)
print(f"inventory_fields_checked=19 mismatches={len(problems)}")
sys.exit(1 if problems else 0)
PY

# Without --coordinator-host, tcp://* becomes this machine's name.
ok "fleet inventory to stdout" "$jetfleet" --config "$tmp/fleet.yaml" fleet inventory || true
grep -q "jetfleet_coordinator_endpoint: \"tcp://$(hostname):7711\"" "$tmp/ok.out" ||
    fail "stdout inventory does not name tcp://$(hostname):7711"

# Bad inputs: exit code, a message saying where and what, and no output file.
bad() { # bad CODE PATTERN ARGS...
    local want=$1 pattern=$2 code=0
    shift 2
    "$jetfleet" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err" || code=$?
    if [ $code -ne "$want" ] || ! grep -q -- "$pattern" "$tmp/bad.err"; then
        fail "jetfleet $*: exit $code (want $want), stderr '$(head -2 "$tmp/bad.err")' (want '$pattern')"
    fi
}
printf 'boards:\n  - name: nx-01\n    type: xavier-nx\n    storage: [{medium: sd, mount: /, dataset_root: /d}]\n    powr_modes: []\n' >"$tmp/bad.yaml"
bad 1 "bad.yaml:5:5: unknown key 'powr_modes'" --config "$tmp/bad.yaml" fleet inventory -o "$tmp/x.yml"
bad 1 "missing.yaml" --config "$tmp/missing.yaml" fleet inventory -o "$tmp/x.yml"
bad 1 "--coordinator-host 'a b': expected a host name" --config "$tmp/fleet.yaml" fleet inventory \
    --coordinator-host 'a b' -o "$tmp/x.yml"
bad 1 "$tmp/no/such/dir/x.yml.tmp: No such file" --config "$tmp/fleet.yaml" fleet inventory \
    -o "$tmp/no/such/dir/x.yml"
bad 2 "usage: jetfleet fleet inventory" --config "$tmp/fleet.yaml" fleet inventory --bogus
bad 2 "usage: jetfleet fleet inventory" --config "$tmp/fleet.yaml" fleet inventory extra
bad 2 "usage: jetfleet fleet inventory" --config "$tmp/fleet.yaml" fleet
bad 2 "usage: jetfleet fleet inventory" --config "$tmp/fleet.yaml" fleet list
[ -e "$tmp/x.yml" ] || [ -e "$tmp/x.yml.tmp" ] && fail "a failed run left a file"
finish
