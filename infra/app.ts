import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { addRegionalStacks } from './stacks/regional-stacks';

const app = new App();
addRegionalStacks(app);
// Any unacknowledged finding fails synthesis.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
