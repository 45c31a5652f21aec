/* The hand-written hostile messages of integration.hostile (hostile_cases.h). */
#include "hostile_cases.h"

#include "jf_msg.h"

const hostile_text_case_t hostile_any_cases[] = {
    {"truncated JSON", "{\"v\":1,\"type\":\"heartbeat\",\"id\":", JF_MSG_E_BAD_JSON, -1},
    {"JSON array", "[{\"v\":1,\"type\":\"heartbeat\",\"id\":1,\"t_us\":1}]", JF_MSG_E_BAD_JSON, -1},
    {"bare number", "42", JF_MSG_E_BAD_JSON, -1},
    {"empty frame", "", JF_MSG_E_BAD_JSON, -1},
    {"duplicate key", "{\"v\":1,\"v\":1,\"type\":\"heartbeat\",\"id\":1,\"t_us\":1}",
     JF_MSG_E_BAD_JSON, -1},
    {"unknown type", "{\"v\":1,\"type\":\"run.explode\",\"id\":101}", JF_MSG_E_UNKNOWN_TYPE, 101},
    {"type missing", "{\"v\":1,\"id\":102}", JF_MSG_E_UNKNOWN_TYPE, 102},
    {"type not a string", "{\"v\":1,\"type\":[\"hello\"],\"id\":103}", JF_MSG_E_UNKNOWN_TYPE, 103},
    {"version 2", "{\"v\":2,\"type\":\"heartbeat\",\"id\":104,\"t_us\":1}", JF_MSG_E_BAD_VERSION,
     104},
    {"version 2 with a future type", "{\"v\":2,\"type\":\"session.resume\",\"id\":105}",
     JF_MSG_E_BAD_VERSION, 105},
    {"version missing", "{\"type\":\"heartbeat\",\"id\":106,\"t_us\":1}", JF_MSG_E_BAD_VERSION,
     106},
    {"version 1.0", "{\"v\":1.0,\"type\":\"heartbeat\",\"id\":107,\"t_us\":1}",
     JF_MSG_E_BAD_VERSION, 107},
};

const hostile_text_case_t hostile_coord_cases[] = {
    {"ack to the coordinator",
     "{\"v\":1,\"type\":\"ack\",\"id\":201,\"run\":\"" HOSTILE_OTHER_RUN
     "\",\"attempt\":1,\"seq\":1}",
     JF_MSG_E_UNKNOWN_TYPE, 201},
    {"run.cancel to the coordinator",
     "{\"v\":1,\"type\":\"run.cancel\",\"id\":202,\"run\":\"" HOSTILE_OTHER_RUN "\",\"attempt\":1}",
     JF_MSG_E_UNKNOWN_TYPE, 202},
    {"ctl.status on the agent endpoint", "{\"v\":1,\"type\":\"ctl.status\",\"id\":203}",
     JF_MSG_E_UNKNOWN_TYPE, 203},
    {"heartbeat with an unknown member",
     "{\"v\":1,\"type\":\"heartbeat\",\"id\":204,\"t_us\":1,\"exec\":\"/bin/sh\"}",
     JF_MSG_E_BAD_FIELD, 204},
    {"negative id", "{\"v\":1,\"type\":\"heartbeat\",\"id\":-5,\"t_us\":1}", JF_MSG_E_BAD_FIELD,
     -1},
};

const hostile_text_case_t hostile_ctl_cases[] = {
    {"hello on the control endpoint", "{\"v\":1,\"type\":\"hello\",\"id\":301}",
     JF_MSG_E_UNKNOWN_TYPE, 301},
    {"heartbeat on the control endpoint", "{\"v\":1,\"type\":\"heartbeat\",\"id\":302,\"t_us\":1}",
     JF_MSG_E_UNKNOWN_TYPE, 302},
    {"ctl.status with an unknown member", "{\"v\":1,\"type\":\"ctl.status\",\"id\":303,\"all\":1}",
     JF_MSG_E_BAD_FIELD, 303},
    {"ctl.submit of broken YAML",
     "{\"v\":1,\"type\":\"ctl.submit\",\"id\":304,\"file\":\"x.yaml\",\"yaml\":\"name: [\"}",
     JF_MSG_E_BAD_REQUEST, 304},
    {"ctl.submit for a board not in the fleet",
     "{\"v\":1,\"type\":\"ctl.submit\",\"id\":305,\"file\":\"x.yaml\",\"yaml\":\"name: evil\\n"
     "target: {boards: [nx-99]}\\nworkloads: [{model: lenet5, dataset: mnist}]\\n"
     "storage: [local]\\n\"}",
     JF_MSG_E_BAD_REQUEST, 305},
    {"ctl.cancel of an unknown sweep",
     "{\"v\":1,\"type\":\"ctl.cancel\",\"id\":306,\"sweep\":\"no\"}", JF_MSG_E_BAD_REQUEST, 306},
};

const hostile_text_case_t hostile_agent_cases[] = {
    {"telemetry to the agent",
     "{\"v\":1,\"type\":\"telemetry\",\"id\":401,\"run\":\"" HOSTILE_OTHER_RUN
     "\",\"attempt\":1,\"seq\":1,\"samples\":[{\"t_us\":1}]}",
     JF_MSG_E_UNKNOWN_TYPE, 401},
    {"ctl.status to the agent", "{\"v\":1,\"type\":\"ctl.status\",\"id\":402}",
     JF_MSG_E_UNKNOWN_TYPE, 402},
    {"heartbeat with an unknown member",
     "{\"v\":1,\"type\":\"heartbeat\",\"id\":403,\"t_us\":1,\"exec\":\"/bin/sh\"}",
     JF_MSG_E_BAD_FIELD, 403},
    {"run.cancel with an unknown member",
     "{\"v\":1,\"type\":\"run.cancel\",\"id\":404,\"run\":\"" HOSTILE_OTHER_RUN
     "\",\"attempt\":1,\"kill\":\"all\"}",
     JF_MSG_E_BAD_FIELD, 404},
    {"negative id", "{\"v\":1,\"type\":\"heartbeat\",\"id\":-5,\"t_us\":1}", JF_MSG_E_BAD_FIELD,
     -1},
};

// run.assign messages the decoder accepts but host-1 cannot run: run.reject, never a child.
const hostile_reject_case_t hostile_reject_cases[] = {
    {"run for another board", "nx-01", "lenet5", "mnist", "local", 0, "DEFAULT", "invalid", 0,
     false},
    {"model on the wrong dataset", "host-1", "lenet5", "cifar10", "local", 0, "DEFAULT", "invalid",
     0, false},
    {"power mode the board lacks", "host-1", "lenet5", "mnist", "local", 8, "MODE_20W_6CORE",
     "infeasible", 0, false},
    {"medium the board lacks", "host-1", "lenet5", "mnist", "nvme", 0, "DEFAULT", "infeasible", 0,
     false},
    {"dataset missing on the medium", "host-1", "resnet18", "cifar10", "local", 0, "DEFAULT",
     "infeasible", 0, false},
    // A host has no power modes to change (its sweep never asks; a hand-made assign may).
    {"custom power mode on a host", "host-1", "lenet5", "mnist", "local", 0, "DEFAULT",
     "infeasible", 2, false},
    {"DVFS off on a host", "host-1", "lenet5", "mnist", "local", 0, "DEFAULT", "infeasible", 0,
     true},
};

const size_t hostile_n_any_cases = sizeof hostile_any_cases / sizeof hostile_any_cases[0];
const size_t hostile_n_coord_cases = sizeof hostile_coord_cases / sizeof hostile_coord_cases[0];
const size_t hostile_n_ctl_cases = sizeof hostile_ctl_cases / sizeof hostile_ctl_cases[0];
const size_t hostile_n_agent_cases = sizeof hostile_agent_cases / sizeof hostile_agent_cases[0];
const size_t hostile_n_reject_cases = sizeof hostile_reject_cases / sizeof hostile_reject_cases[0];
