/**
 * Imports every repository for its side effect: registering the organization eraser of its
 * records. The organization delete operation imports this module, so deleting an
 * organization erases every entity. `all-repositories.test.ts` fails when a repository file
 * is missing here.
 */
import './agent-repository';
import './api-key-repository';
import './auth-session-repository';
import './conversation-repository';
import './interaction-repository';
import './memory-repository';
import './message-repository';
import './organization-repository';
import './role-repository';
import './service-repository';
import './state-machine-repository';
import './user-model-repository';
import './user-repository';
