import { ChangeResourceRecordSetsCommand, InvalidChangeBatch } from '@aws-sdk/client-route-53';
import { describe, expect, it, vi } from 'vitest';
import { route53FrontendDns } from './route53-frontend-dns';

const settings = { domain: 'app.example.com', hostedZoneId: 'Z123', target: 'd111.cloudfront.net' };

const sentChange = (send: ReturnType<typeof vi.fn>) => {
  const command = send.mock.calls[0]?.[0] as ChangeResourceRecordSetsCommand;
  expect(command).toBeInstanceOf(ChangeResourceRecordSetsCommand);
  return command.input;
};

describe('route53FrontendDns', () => {
  it("upserts the organization's CNAME to the hosting", async () => {
    // Prepare
    const send = vi.fn().mockResolvedValue({});

    // Act
    await route53FrontendDns({ send }, settings).addOrganization('acme');

    // Assess
    const input = sentChange(send);
    expect(input.HostedZoneId).toBe('Z123');
    expect(input.ChangeBatch?.Changes).toEqual([
      {
        Action: 'UPSERT',
        ResourceRecordSet: {
          Name: 'acme.app.example.com',
          Type: 'CNAME',
          TTL: 300,
          ResourceRecords: [{ Value: 'd111.cloudfront.net' }],
        },
      },
    ]);
  });

  it("deletes the organization's record", async () => {
    // Prepare
    const send = vi.fn().mockResolvedValue({});

    // Act
    await route53FrontendDns({ send }, settings).removeOrganization('acme');

    // Assess
    expect(sentChange(send).ChangeBatch?.Changes?.[0]?.Action).toBe('DELETE');
  });

  it('treats a record already gone as deleted, so a repeated delete succeeds', async () => {
    // Prepare
    const gone = new InvalidChangeBatch({
      message: 'Tried to delete resource record set [name=acme.app.example.com., type=CNAME] but it was not found',
      $metadata: {},
    });
    const send = vi.fn().mockRejectedValue(gone);

    // Act / Assess
    await expect(route53FrontendDns({ send }, settings).removeOrganization('acme')).resolves.toBeUndefined();
  });

  it('lets other failures through, so the deletion is retried', async () => {
    // Prepare
    const send = vi.fn().mockRejectedValue(new Error('throttled'));

    // Act / Assess
    await expect(route53FrontendDns({ send }, settings).removeOrganization('acme')).rejects.toThrow('throttled');
  });
});
