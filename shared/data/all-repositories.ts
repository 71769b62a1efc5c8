/**
 * Imports every repository for its side effect: registering the organization eraser of its
 * records. The organization delete operation imports this module, so deleting an
 * organization erases every entity. `all-repositories.test.ts` fails when a repository file
 * is missing here.
 */
import '../agent/agent-repository';
import '../organization/api-key-repository';
import '../auth/auth-session-repository';
import '../conversation/conversation-repository';
import '../conversation/interaction-repository';
import '../user/memory-repository';
import '../conversation/message-repository';
import '../metric/metric-repository';
import '../metric/result-repository';
import '../organization/organization-repository';
import '../role/role-repository';
import '../service/service-repository';
import '../state-machine/state-machine-repository';
import '../user/user-model-repository';
import '../user/user-repository';
