import { consoleConversationSearch } from '#shared/app/conversation-search';
import { consoleDashboard } from '#shared/app/dashboard';
import { errorPage } from '#shared/app/error-page';
import { appOperations } from '#shared/app/operations';
import { consolePage } from '#shared/app/page-parts';
import { page } from '#shared/http/browser-session';
import { implementGroup, streamHandler } from '#shared/http/http-handler';

/**
 * The console's pages over the organization's analytics lake: the dashboard and the conversation
 * search. Their own function, since they run the SQL query's engine (DuckDB, its native binding
 * and the memory it needs) as the admin group's submit-sql-query does; the web app's other pages
 * and its chat stay on the app's function. Same browser session, CSRF cookie and error pages.
 */
export const handler = streamHandler(
  implementGroup('app-analytics', [appOperations], {
    'get-app-dashboard': (input) =>
      page(consolePage((request, caller) => consoleDashboard(request, caller, input.query)))(input),

    'get-app-conversation-search': (input) =>
      page(consolePage((request, caller) => consoleConversationSearch(request, caller, input.query)))(input),
  }),
  { errorPage },
);
